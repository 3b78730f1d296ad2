/**
 * Where a configuration file keeps its data, read without validating the rest: servicectl needs only the
 * control socket's path to reach a running server (which validated the file when it started).
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse } from 'yaml';

export interface ConfigLocation {
  readonly file: string;
  readonly dataDir: string;
  /** The modules listed under `modules:`. */
  readonly modules: readonly string[];
}

export function locateConfig(file: string): ConfigLocation {
  const path = resolve(file);
  let raw: unknown;
  try {
    raw = parse(readFileSync(path, 'utf8'), { maxAliasCount: 100 });
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message.split('\n')[0];
    throw new Error(`cannot read the configuration file ${path}: ${reason}`);
  }
  const top = typeof raw === 'object' && raw !== null ? (raw as { data_dir?: unknown; modules?: unknown }) : {};
  const dataDir = typeof top.data_dir === 'string' ? top.data_dir : 'data';
  const modules = typeof top.modules === 'object' && top.modules !== null ? Object.keys(top.modules) : [];
  return { file: path, dataDir: resolve(dirname(path), dataDir), modules };
}
