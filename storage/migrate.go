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
// transactional, so two processes migrating at once do no harm.
func (s *Store) Migrate(ctx context.Context) error {
	m, err := s.migrator()
	if err != nil {
		return err
	}
	if err := m.Init(ctx); err != nil {
		return fmt.Errorf("storage: init migrations: %w", err)
	}
	if _, err := m.Migrate(ctx); err != nil {
		return fmt.Errorf("storage: migrate: %w", err)
	}
	return nil
}

// MigrationStatus lists the migrations and whether each is applied.
func (s *Store) MigrationStatus(ctx context.Context) ([]string, error) {
	m, err := s.migrator()
	if err != nil {
		return nil, err
	}
	if err := m.Init(ctx); err != nil {
		return nil, err
	}
	ms, err := m.MigrationsWithStatus(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ms))
	for i, mg := range ms {
		state := "pending"
		if mg.IsApplied() {
			state = "applied"
		}
		out[i] = mg.Name + " " + state
	}
	return out, nil
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
	return migrate.NewMigrator(s.w, ms,
		migrate.WithTemplateData(s.dialect),
		migrate.WithMarkAppliedOnSuccess(true),
		migrate.WithUpsert(true),
		migrate.WithTableName("herald_migrations"),
		migrate.WithLocksTableName("herald_migration_locks"),
	), nil
}
