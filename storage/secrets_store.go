package storage

import (
	"context"
	"fmt"
)

// SecretsReport says how the bot configs in the database are stored.
type SecretsReport struct {
	Bots      int            // bot configs in all
	Plain     int            // stored unsealed (before encryption was turned on)
	ByKey     map[string]int // sealed, by key id
	Unopened  int            // sealed with a key the store does not have, or damaged
	FirstFail error          // why the first unopened one did not open
}

// CheckSecrets opens every bot config with the store's Sealer and reports
// how they are stored. A store without a Sealer reports sealed configs as
// unopened.
func (s *Store) CheckSecrets(ctx context.Context) (SecretsReport, error) {
	var rows []botRow
	if err := s.r.NewSelect().Model(&rows).Column("id", "config").Where("deleted_ms = 0").Scan(ctx); err != nil {
		return SecretsReport{}, s.fail(err, "read bot configs")
	}
	rep := SecretsReport{Bots: len(rows), ByKey: map[string]int{}}
	for _, r := range rows {
		id, _, sealed := splitSealed(r.Config)
		if !sealed {
			rep.Plain++
			continue
		}
		rep.ByKey[id]++
		if _, err := s.queries.bot(r); err != nil {
			rep.Unopened++
			if rep.FirstFail == nil {
				rep.FirstFail = err
			}
		}
	}
	return rep, nil
}

// RotateSecrets seals every bot config that is not sealed with the primary
// key (plain ones, or ones sealed with an older key) with the primary key,
// and returns how many it re-sealed. Each config is re-sealed in its own
// transaction, so the command can be run again after an interruption.
func (s *Store) RotateSecrets(ctx context.Context) (int, error) {
	if s.sealer == nil {
		return 0, fmt.Errorf("storage: no secret key is configured")
	}
	var rows []botRow
	if err := s.r.NewSelect().Model(&rows).Column("id", "config").Where("deleted_ms = 0").Scan(ctx); err != nil {
		return 0, s.fail(err, "read bot configs")
	}
	n := 0
	for _, r := range rows {
		if s.sealer.Current(r.Config) {
			continue
		}
		err := s.runTx(ctx, func(ctx context.Context, q queries) error {
			var cur botRow
			if err := q.w.NewSelect().Model(&cur).Column("id", "config").Where("id = ?", r.ID).Scan(ctx); err != nil {
				return q.fail(err, "read bot config")
			}
			if s.sealer.Current(cur.Config) {
				return nil
			}
			plain, err := s.sealer.Open(cur.Config)
			if err != nil {
				return fmt.Errorf("bot %d: %w", cur.ID, err)
			}
			_, err = q.w.NewUpdate().Model((*botRow)(nil)).Set("config = ?", s.sealer.Seal(plain)).Where("id = ?", cur.ID).Exec(ctx)
			return q.fail(err, "re-seal bot config")
		})
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// SecretKeyID is the id of the key that seals new bot configs, or "" when
// the store has no Sealer.
func (s *Store) SecretKeyID() string {
	if s.sealer == nil {
		return ""
	}
	return s.sealer.primaryID
}
