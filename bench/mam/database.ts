/**
 * The scratch database of a bench/mam run: test/support's fresh MariaDB or PostgreSQL database (dropped
 * afterwards), or an SQLite file of the run's directory under the name the caller gives (run.ts starts
 * the server on the server's default file name).
 */
import { join } from 'node:path';
import type { SqlSettings } from '../../kernel/src/storage/database.js';
import { testDatabase } from '../../test/support/databases.js';

export async function scratchDatabase(type: SqlSettings['type'], dir: string, sqliteFile: string): Promise<{ settings: SqlSettings; drop: () => Promise<void> }> {
  if (type === 'sqlite') return { settings: { type, server: '', database: join(dir, sqliteFile), username: '', password: '', poolSize: 1 }, drop: async () => undefined };
  const database = testDatabase(type);
  return { settings: await database.settings(dir), drop: () => database.cleanup() };
}
