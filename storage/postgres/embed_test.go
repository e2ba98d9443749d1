package postgres_test

import "embed"

//go:embed migrations/*.sql
var migrationsDir embed.FS
