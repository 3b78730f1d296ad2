/**
 * The SQL dialect export2sql writes: named by the file's ending (`.pgsql`/`.psql` for PostgreSQL,
 * `.mysql`/`.mariadb` for MariaDB/MySQL, optionally followed by `.sql`), else the configured sql_type when
 * that is mysql or pgsql. On SQLite (the default install) with any other ending the target is ambiguous, and
 * the command says how to name it instead of guessing.
 */
import { badArgument, type SqlClient, type SqlType } from '@service/plugin-api';

export interface Dialect {
  readonly client: Extract<SqlClient, 'pg' | 'mysql2'>;
  /** As the operator says it: sql_type's value. */
  readonly name: 'pgsql' | 'mysql';
}

const PGSQL: Dialect = { client: 'pg', name: 'pgsql' };
const MYSQL: Dialect = { client: 'mysql2', name: 'mysql' };

const ENDINGS: ReadonlyArray<[RegExp, Dialect]> = [
  [/\.(pgsql|psql|pg|postgres|postgresql)(\.sql)?$/i, PGSQL],
  [/\.(mysql|mariadb)(\.sql)?$/i, MYSQL],
];

export function dialectFor(file: string, sqlType: SqlType): Dialect {
  for (const [ending, dialect] of ENDINGS) if (ending.test(file)) return dialect;
  if (sqlType === 'pgsql') return PGSQL;
  if (sqlType === 'mysql') return MYSQL;
  throw badArgument(
    'file',
    `cannot tell which database '${file}' is for: sql_type is sqlite, so end the file name with .pgsql (PostgreSQL) or .mysql (MariaDB/MySQL)`,
  );
}
