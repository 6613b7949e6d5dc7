package storage

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/uptrace/bun/migrate"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrate creates or upgrades the schema. Every migration is idempotent and
// transactional; on PostgreSQL, where several nodes may start at once,
// migrating is also serialized by a session-level advisory lock, which the
// database releases by itself if the process holding it dies.
func (s *Store) Migrate(ctx context.Context) error {
	return s.withMigrator(ctx, func(m *migrate.Migrator) error {
		if _, err := m.Migrate(ctx); err != nil {
			return fmt.Errorf("storage: migrate: %w", err)
		}
		return nil
	})
}

// MigrationStatus lists the migrations and whether each is applied.
func (s *Store) MigrationStatus(ctx context.Context) ([]string, error) {
	var out []string
	err := s.withMigrator(ctx, func(m *migrate.Migrator) error {
		ms, err := m.MigrationsWithStatus(ctx)
		if err != nil {
			return err
		}
		out = make([]string, len(ms))
		for i, mg := range ms {
			state := "pending"
			if mg.IsApplied() {
				state = "applied"
			}
			out[i] = mg.Name + " " + state
		}
		return nil
	})
	return out, err
}

// withMigrator runs fn with the schema's migrator, its tables created,
// under the dialect's migration lock.
func (s *Store) withMigrator(ctx context.Context, fn func(m *migrate.Migrator) error) error {
	unlock, err := s.lockMigrations(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	m, err := s.migrator()
	if err != nil {
		return err
	}
	if err := m.Init(ctx); err != nil {
		return fmt.Errorf("storage: init migrations: %w", err)
	}
	return fn(m)
}

// lockMigrations takes the dialect's migration lock on a connection of
// its own that holds it until unlock.
func (s *Store) lockMigrations(ctx context.Context) (unlock func(), err error) {
	if s.dialect.migrationLock == "" {
		return noop, nil
	}
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return nil, s.dialect.classify(fmt.Errorf("storage: connect for the migration lock: %w", err))
	}
	if _, err := conn.ExecContext(ctx, s.dialect.migrationLock); err != nil {
		conn.Close()
		return nil, s.dialect.classify(fmt.Errorf("storage: take the migration lock: %w", err))
	}
	return func() {
		// A failed unlock (the connection broke) releases the lock too:
		// it belongs to the session.
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), s.dialect.migrationUnlock)
		conn.Close()
	}, nil
}

func (s *Store) migrator() (*migrate.Migrator, error) {
	ms := migrate.NewMigrations()
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	if err := ms.Discover(sub); err != nil {
		return nil, fmt.Errorf("storage: read migrations: %w", err)
	}
	registerColumns(ms)
	registerPresence(ms)
	registerRetry(ms)
	registerBacklogShards(ms)
	return migrate.NewMigrator(s.w, ms,
		migrate.WithTemplateData(s.dialect),
		migrate.WithMarkAppliedOnSuccess(true),
		migrate.WithUpsert(true),
		migrate.WithTableName("herald_migrations"),
		migrate.WithLocksTableName("herald_migration_locks"),
	), nil
}
