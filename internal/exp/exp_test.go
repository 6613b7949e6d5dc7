package exp

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"testing"

	_ "modernc.org/sqlite"
)

func open(b *testing.B) *sql.DB {
	db, err := sql.Open("sqlite", "file:"+b.TempDir()+"/x.db?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate")
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER)"); err != nil {
		b.Fatal(err)
	}
	db.Exec("INSERT INTO t VALUES (1, 0)")
	return db
}

func BenchmarkTxStmt(b *testing.B) {
	db := open(b)
	st, _ := db.Prepare("UPDATE t SET n = n + ? WHERE id = ?")
	tx, _ := db.Begin()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := tx.StmtContext(context.Background(), st)
		if _, err := s.Exec(1, 1); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
	tx.Commit()
}

func BenchmarkRawDriver(b *testing.B) {
	db := open(b)
	conn, _ := db.Conn(context.Background())
	conn.Raw(func(dc any) error {
		c := dc.(driver.ConnPrepareContext)
		ds, err := c.PrepareContext(context.Background(), "UPDATE t SET n = n + ? WHERE id = ?")
		if err != nil {
			b.Fatal(err)
		}
		ex := dc.(driver.ExecerContext)
		ex.ExecContext(context.Background(), "BEGIN IMMEDIATE", nil)
		args := []driver.NamedValue{{Ordinal: 1, Value: int64(1)}, {Ordinal: 2, Value: int64(1)}}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := ds.(driver.StmtExecContext).ExecContext(context.Background(), args); err != nil {
				b.Fatal(err)
			}
		}
		ex.ExecContext(context.Background(), "COMMIT", nil)
		return nil
	})
}

func BenchmarkUnprepared(b *testing.B) {
	db := open(b)
	tx, _ := db.Begin()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := tx.Exec("UPDATE t SET n = n + ? WHERE id = ?", 1, 1); err != nil {
			b.Fatal(err)
		}
	}
	tx.Commit()
}
