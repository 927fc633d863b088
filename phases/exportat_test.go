package phases

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/internal/worldtest"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/world"
)

// TestExportAtIsExportOfLoad: exporting a committed tick straight from
// state.db gives what Load then Export give, every memory entry up to the
// tick included, for every tick of a run.
func TestExportAtIsExportOfLoad(t *testing.T) {
	const ticks = 4
	r := narrativeRunner(t, openaitest.New(t, sameAnswers).URL, nil)
	if _, err := r.Run(t.Context(), ticks); err != nil {
		t.Fatal(err)
	}
	n := r.Stepper.(*Narrative)
	for tick := 1; tick <= ticks; tick++ {
		loaded, err := n.Load(t.Context(), r.Store, tick)
		if err != nil {
			t.Fatal(err)
		}
		want, err := n.Export(t.Context(), r.Store, loaded)
		if err != nil {
			t.Fatal(err)
		}
		got, err := n.ExportAt(t.Context(), r.Store, tick)
		if err != nil {
			t.Fatal(err)
		}
		wb, _ := json.Marshal(want)
		gb, _ := json.Marshal(got)
		if string(gb) != string(wb) {
			t.Errorf("tick %d: ExportAt =\n%s\nwant (Export of Load)\n%s", tick, gb, wb)
		}
		var memories int
		for _, cs := range got.(*world.State).Characters {
			memories += len(cs.Memory)
		}
		if memories < tick {
			t.Errorf("tick %d: %d memory entries exported, want every one written up to the tick", tick, memories)
		}
	}
}

// TestExportAtStateMismatch: a stored tick that no longer fits the
// simulation's files is refused as Load refuses it.
func TestExportAtStateMismatch(t *testing.T) {
	r := narrativeRunner(t, openaitest.New(t, sameAnswers).URL, nil)
	if _, err := r.Run(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	n := r.Stepper.(*Narrative)
	changed := worldtest.House()
	changed.Characters = changed.Characters[1:] // one written out since the run
	n.Sim = changed
	if _, err := n.ExportAt(t.Context(), r.Store, 1); !errors.Is(err, runner.ErrStateMismatch) {
		t.Errorf("ExportAt of a changed world = %v, want ErrStateMismatch", err)
	}
}
