package a2aedge

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/agentd/agentd/internal/httpapi"
	"github.com/agentd/agentd/internal/sentineltest"
)

// TestErrorMapCoversCoreSentinels checks that writeErr answers every
// sentinel error of the core as the HTTP API does (httpapi.ToError, whose
// own test lists the decisions).
func TestErrorMapCoversCoreSentinels(t *testing.T) {
	want := map[string][]string{}
	for _, s := range sentineltest.Core() {
		e := httpapi.ToError(s.Err)
		k := fmt.Sprintf("%d %s", e.Status, e.Code)
		want[k] = append(want[k], s.Name)
	}
	sentineltest.Check(t, want, func(err error) string {
		rec := httptest.NewRecorder()
		writeErr(rec, slog.New(slog.DiscardHandler), err)
		var body struct{ Error struct{ Code string } }
		if json.Unmarshal(rec.Body.Bytes(), &body) != nil {
			return fmt.Sprintf("%d (not JSON)", rec.Code)
		}
		return fmt.Sprintf("%d %s", rec.Code, body.Error.Code)
	})
}
