/**
 * Which modules a process loads: node's loader hooks (test/fixtures/hooks/record-modules.mjs, given to node with
 * `--import`) append "<pid> <thread> <url>" for each module to the file $RECORD_MODULES_TO names.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO } from './process.js';

/** The `--import` argument that records the modules. */
export const RECORD_MODULES = join(REPO, 'test/fixtures/hooks/record-modules.mjs');

/** The server's code and its heaviest packages: what a process that serves no client need not load. */
export const SERVER_CODE = /\/kernel\/dist\/(server|index)\.js$|\/node_modules\/(koa|knex|oidc-provider|better-sqlite3)\//;

export interface LoadedModule {
  readonly pid: number;
  /** 0 for the main thread. */
  readonly thread: number;
  readonly url: string;
}

export async function readLoaded(file: string): Promise<LoadedModule[]> {
  return (await readFile(file, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [pid, thread, url] = line.split(' ') as [string, string, string];
      return { pid: Number(pid), thread: Number(thread), url };
    });
}
