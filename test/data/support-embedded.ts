/**
 * Helpers of the embedded-database command tests (test/data/embedded*.test.ts): the whole content of a
 * SQLite database as comparable data (every table, every row, every field, in a stable order) read from the
 * live server or from a file; the documented backup container read independently of the server's code;
 * a command through servicectl's control socket with its progress frames; and client load (accounts
 * registered over the HTTP API, one after another, each noted with the time its call began).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Knex } from 'knex';
import type { TestServer } from '../support/server.js';
import { ADMIN } from '../support/admin-api.js';

/** table → rows, each row a JSON text of its fields (blobs as base64), sorted. */
export type DbState = Record<string, string[]>;

const encode = (v: unknown) => (Buffer.isBuffer(v) ? { blob: v.toString('base64') } : typeof v === 'bigint' ? v.toString() : v);

function rowText(row: Record<string, unknown>): string {
  return JSON.stringify(Object.keys(row).sort().map((k) => [k, encode(row[k])]));
}

/** The content of a live store, through the server's own connection. */
export async function liveState(knex: Knex): Promise<DbState> {
  const tables = (await knex.raw("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")) as Array<{ name: string }>;
  const out: DbState = {};
  for (const { name } of tables) out[name] = ((await knex(name).select('*')) as Array<Record<string, unknown>>).map(rowText).sort();
  return out;
}

/** The content of a SQLite file. */
export function fileState(file: string): DbState {
  const db = new Database(file, { readonly: true });
  try {
    const out: DbState = {};
    for (const { name } of db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as Array<{ name: string }>) {
      out[name] = (db.prepare(`SELECT * FROM "${name}"`).all() as Array<Record<string, unknown>>).map(rowText).sort();
    }
    return out;
  } finally {
    db.close();
  }
}

export interface Container {
  manifest: { format: string; version: number; created: string; server: string; node: string; parts: Array<{ store: string; bytes: number; sha256: string; tables: number; rows: number }> };
  images: Record<string, Buffer>;
}

/** Reads a backup as docs/data.md describes it: magic line, manifest line, then each image. */
export async function readContainer(file: string): Promise<Container> {
  const bytes = await readFile(file);
  const first = bytes.indexOf(0x0a);
  if (bytes.subarray(0, first + 1).toString() !== 'SERVICE-DB-BACKUP 1\n') throw new Error('no magic');
  const second = bytes.indexOf(0x0a, first + 1);
  const manifest = JSON.parse(bytes.subarray(first + 1, second).toString()) as Container['manifest'];
  const images: Record<string, Buffer> = {};
  let at = second + 1;
  for (const part of manifest.parts) {
    images[part.store] = bytes.subarray(at, at + part.bytes);
    at += part.bytes;
  }
  if (at !== bytes.length) throw new Error(`container length ${bytes.length}, parts end at ${at}`);
  return { manifest, images };
}

export interface Load {
  /** Stops the load; resolves with every account it registered (bare name) and when its call began. */
  stop(): Promise<Array<{ user: string; began: number }>>;
}

/** Registers `prefix`-N accounts on localhost over the HTTP API, one after another, until stopped. */
export function registrationLoad(t: TestServer, prefix: string): Load {
  let running = true;
  const done: Array<{ user: string; began: number }> = [];
  const loop = (async () => {
    for (let i = 0; running; i++) {
      const user = `${prefix}${i}`;
      const began = Date.now();
      const res = await t.api('register', { user, host: 'localhost', password: 'load-pw' }, { basic: ADMIN });
      if (res.status !== 200) throw new Error(`load: register ${user}: ${res.status} ${res.text}`);
      done.push({ user, began });
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return done;
    },
  };
}

export { overControlSocket } from '../support/cli.js';
