package broker

import (
	"context"
	"crypto/rand"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/strata-streaming/strata/internal/auth"
	"github.com/strata-streaming/strata/metadata/cluster"
)

// parseAddScram parses one --add-scram value, kafka-storage's form:
// SCRAM-SHA-512=[name=admin,password=admin-secret] with optional
// iterations=8192 (default 4096) and salt; values may be double-quoted to
// hold commas.
func parseAddScram(v string) (cluster.ScramUpsert, error) {
	mech, body, ok := strings.Cut(strings.TrimSpace(v), "=")
	mech = strings.ToUpper(strings.TrimSpace(mech))
	if !ok || (mech != auth.ScramSHA256 && mech != auth.ScramSHA512) || !strings.HasPrefix(body, "[") || !strings.HasSuffix(body, "]") {
		return cluster.ScramUpsert{}, fmt.Errorf("--add-scram: want SCRAM-SHA-256=[name=…,password=…] or SCRAM-SHA-512=[…]")
	}
	fields := map[string]string{}
	rest := body[1 : len(body)-1]
	for rest != "" {
		key, after, ok := strings.Cut(rest, "=")
		if !ok {
			return cluster.ScramUpsert{}, fmt.Errorf("--add-scram: %q is not key=value", rest)
		}
		var val string
		if strings.HasPrefix(after, `"`) {
			end := strings.IndexByte(after[1:], '"')
			if end < 0 {
				return cluster.ScramUpsert{}, fmt.Errorf("--add-scram: unterminated quote after %s=", key)
			}
			val, rest = after[1:1+end], strings.TrimPrefix(after[2+end:], ",")
		} else {
			val, rest, _ = strings.Cut(after, ",")
		}
		fields[strings.TrimSpace(key)] = val
	}
	name, password := fields["name"], fields["password"]
	if name == "" || password == "" {
		return cluster.ScramUpsert{}, fmt.Errorf("--add-scram: name and password are required")
	}
	iterations := auth.MinScramIterations
	if it := fields["iterations"]; it != "" {
		n, err := strconv.Atoi(it)
		if err != nil {
			return cluster.ScramUpsert{}, fmt.Errorf("--add-scram: iterations %q", it)
		}
		iterations = n
	}
	salt := []byte(fields["salt"])
	if len(salt) == 0 {
		salt = make([]byte, 32)
		_, _ = rand.Read(salt)
	}
	cred, err := auth.NewScramCredential(mech, password, salt, iterations)
	if err != nil {
		return cluster.ScramUpsert{}, fmt.Errorf("--add-scram: %w", err)
	}
	return cluster.ScramUpsert{User: name, Mechanism: mech, Credential: scramCredentialOf(cred)}, nil
}

// bootstrapScram creates the --add-scram credentials when the quorum holds
// none yet (the first admin of a new cluster); once any credential exists
// the flag is ignored, so a restart with it changes nothing.
func (s *Server) bootstrapScram(ctx context.Context) error {
	if len(s.cfg.AddScram) == 0 || len(s.clusterState().Scram) > 0 {
		return nil
	}
	var rec cluster.AlterScramCredentials
	for _, v := range s.cfg.AddScram {
		u, err := parseAddScram(v)
		if err != nil {
			return err
		}
		rec.Upserts = append(rec.Upserts, u)
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := s.meta.propose(pctx, rec); err != nil {
		return fmt.Errorf("broker: --add-scram: %w", err)
	}
	s.logger.Info("created the --add-scram credentials", "users", len(rec.Upserts))
	return nil
}
