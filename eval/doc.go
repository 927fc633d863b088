// Package eval runs eval suites: the calls of a simulation's committed
// ticks, made again with variants of its prompt templates and model
// settings, each answer checked by the suite's assertions (a judge model's
// among them) and compared with the baseline on the same cases.
//
// A suite (evals.yaml) names its cases (ticks, phases, entities, a sample,
// hand-written files that change the state), its variants, its judge, the
// assertions of each phase with their pass-rate thresholds. Run makes the
// calls through the session's kind (session.Caller), with answers cached in
// the simulation's eval.db by request, so that an unchanged variant costs
// nothing the second time; a Result holds every answer, its checks and what
// it would change in the world, the summary of each variant and the paired
// comparison with the baseline.
package eval
