/**
 * The worker thread of replace.ts: after a store's data was replaced, copies its write-ahead log back into
 * the database file (`PRAGMA wal_checkpoint(PASSIVE)`) on a connection of its own. The server's connection
 * would do it inside the commit (SQLite's automatic checkpoint), holding the event loop for as long as it
 * takes to write the whole database again; here it runs beside the event loop. Posts the pragma's answer.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const { file } = workerData as { file: string };
try {
  const db = new Database(file, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    parentPort!.postMessage({ result: db.pragma('wal_checkpoint(PASSIVE)') });
  } finally {
    db.close();
  }
} catch (err) {
  parentPort!.postMessage({ error: (err as Error).message });
}
