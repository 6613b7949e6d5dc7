package transport

import (
	"fmt"
	"net/http"

	"github.com/heraldpush/herald/push"
	"github.com/uptrace/bunrouter"
)

func (s *Server) queryJob(w http.ResponseWriter, req bunrouter.Request) error {
	id := req.Param("id")
	infoOf(req.Context()).words = jobWords
	j, err := s.eng.Jobs().Get(req.Context(), principalOf(req.Context()), id)
	if err != nil {
		return err
	}
	infoOf(req.Context()).jobIDs = []string{j.ID}
	writeOK(w, http.StatusOK, "", NewJobView(j))
	return nil
}

func (s *Server) cancelJob(w http.ResponseWriter, req bunrouter.Request) error {
	id := req.Param("id")
	ri := infoOf(req.Context())
	ri.jobIDs, ri.words = []string{id}, jobWords
	j, err := s.eng.Jobs().Cancel(req.Context(), principalOf(req.Context()), id)
	if err != nil {
		return err
	}
	msg := "the job was canceled"
	if j.Cost > 0 {
		msg += " and its points were returned"
	}
	writeOK(w, http.StatusOK, msg, NewJobView(j))
	return nil
}

// keyedView is what GET /openapi/queue-request returns for a single send:
// the job, its message record and the key.
type keyedView struct {
	JobView
	IdempotencyKey string      `json:"idempotencyKey"`
	Record         messageView `json:"record"`
}

func (s *Server) queryByKey(w http.ResponseWriter, req bunrouter.Request) error {
	q := req.URL.Query()
	if !q.Has("key") {
		return required("the query parameter key (the Idempotency-Key of the send)")
	}
	key := q.Get("key")
	k, err := s.eng.Jobs().ByIdempotencyKey(req.Context(), principalOf(req.Context()), key)
	if push.IsKind(err, push.NotFound) {
		writeOK(w, http.StatusOK, "no send was made with this key: the original request may be resubmitted with the original key", nil)
		return nil
	}
	if err != nil {
		return err
	}
	if k.Kind != push.RequestKindSingle {
		return &httpError{http.StatusBadRequest, "batch_key", fmt.Sprintf("the Idempotency-Key %q belongs to a %s send, which is not recovered by key: resubmit the identical request with the same key to get its jobIds again, then query each job", key, k.Kind)}
	}
	j := k.Jobs[0]
	infoOf(req.Context()).jobIDs = []string{j.ID}
	writeOK(w, http.StatusOK, "", keyedView{JobView: NewJobView(j), IdempotencyKey: k.Key, Record: messageRecord(j)})
	return nil
}
