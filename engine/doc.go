// Package engine is the phase and timing machine of seed 003 for games of
// ships with powers: a game declares its ordered scheduled phases and a
// catalog of definitions whose powers carry a phase, a timing and an effect;
// the engine plays one turn at a time.
//
// The contract, in short:
//
//   - Only scheduled phases are iterated (DICE_ROLL ... AUTOMATIC). EVENT,
//     DICE_MANIPULATION and PASSIVE are not phases: EVENT powers fire when
//     their event happens (a ship destroyed, a ship completed), DICE_MANIPULATION
//     is applied inside DICE_ROLL before the dice are used, PASSIVE powers are
//     never executed, only queried through [Modifiers].
//   - In a phase, the timing decides what executes: CONTINUOUS every turn
//     while the ship is alive; ONCE_ONLY_AUTOMATIC once, on the turn the ship
//     was built, even if it was destroyed since (usage is recorded on the
//     instance and never reset). The seed's timings only: a charge power is
//     a CONTINUOUS power of FIRST_STRIKE or SIMULTANEOUS_DECLARATION, which
//     fires when its owner spends one of the ship's charges on it.
//   - UPON_DESTRUCTION powers fire before the ship is marked destroyed
//     (Rule 4), and their effects persist.
//   - Declarations of a simultaneous phase are buffered until every player
//     is ready, then revealed together; in FIRST_STRIKE players with nothing
//     to declare are readied by the engine.
//   - CONDITIONAL and CUSTOM powers resolve into standard effects only.
//   - Definitions are validated when the catalog is built.
//
// An [Observer] sees every step (phase entered, power fired, query made,
// ship marked and destroyed), so that tests check the contract on what
// happened rather than on text.
package engine
