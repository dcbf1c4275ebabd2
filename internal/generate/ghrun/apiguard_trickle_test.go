package ghrun

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// An API server that trickles one byte just inside the idle timeout kicks the idle timer with
// every byte: the attempt's total bound (apiAttemptIdles idle timeouts) cuts it off, and says so.
// (An answer cut off is a network error, retried for a GET: one attempt is enough here.)
func TestAPITrickleIsCutOff(t *testing.T) {
	t.Parallel()
	body := `{"id": 1, "status": "completed", "conclusion": "success"` + strings.Repeat(" ", 150) + `}`
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		for i := 0; i < len(body); i++ {
			w.Write([]byte{body[i]})
			w.(http.Flusher).Flush()
			time.Sleep(25 * time.Millisecond) // 20 times inside the idle timeout: a loaded machine keeps it inside
		}
	}))
	defer api.Close()
	c, err := NewClient(ClientOptions{Token: testToken, APIURL: api.URL + "/", APIIdleTimeout: 500 * time.Millisecond, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, _, err = c.gh.Actions.GetWorkflowRunByID(context.Background(), "acme", "kernels", 1)
	el := time.Since(start)
	t.Logf("err=%v after %s with a %s idle timeout", err, el.Round(time.Millisecond), 500*time.Millisecond)
	if err == nil || el > 2*apiAttemptIdles*500*time.Millisecond || !strings.Contains(err.Error(), "within 2.5s") {
		t.Errorf("err %v after %s: want the answer cut off after 2.5s", err, el.Round(time.Millisecond))
	}
}
