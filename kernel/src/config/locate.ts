/**
 * Where a configuration file keeps its data, read without validating the rest: servicectl needs only the
 * control socket's path to reach a running server (which validated the file when it started).
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { YAMLError, parse } from 'yaml';

export interface ConfigLocation {
  readonly file: string;
  readonly dataDir: string;
  /** The modules listed under `modules:`. */
  readonly modules: readonly string[];
  /**
   * Set when the file is not valid YAML: data_dir and the modules were read line by line instead, so
   * servicectl can still reach (and stop, or reload) the running server, and says what is wrong.
   */
  readonly problem?: string;
}

export function locateConfig(file: string): ConfigLocation {
  const path = resolve(file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message.split('\n')[0];
    throw new Error(`cannot read the configuration file ${path}: ${reason}`);
  }
  let raw: unknown;
  try {
    raw = parse(text, { maxAliasCount: 100 });
  } catch (err) {
    if (!(err instanceof YAMLError)) throw err;
    const at = err.linePos?.[0];
    const where = at ? `line ${at.line}, column ${at.col}` : 'somewhere';
    const problem = `${path} is not valid YAML (${where}: ${err.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')})`;
    return { file: path, ...lineByLine(text, path), problem };
  }
  const top = typeof raw === 'object' && raw !== null ? (raw as { data_dir?: unknown; modules?: unknown }) : {};
  const dataDir = typeof top.data_dir === 'string' ? top.data_dir : 'data';
  const modules = typeof top.modules === 'object' && top.modules !== null ? Object.keys(top.modules) : [];
  return { file: path, dataDir: resolve(dirname(path), dataDir), modules };
}

/** data_dir and the module names from top-level lines, for a file YAML cannot parse. */
function lineByLine(text: string, path: string): { dataDir: string; modules: string[] } {
  const dataDir = /^data_dir:[ \t]*(?:"([^"]*)"|'([^']*)'|([^#\s][^#]*?))[ \t]*(?:#.*)?$/m.exec(text);
  const modules: string[] = [];
  let inModules = false;
  for (const line of text.split(/\r?\n/)) {
    if (/^modules:\s*(#.*)?$/.test(line)) inModules = true;
    else if (/^\S/.test(line)) inModules = false;
    else if (inModules) {
      const name = /^[ \t]+(mod_[A-Za-z0-9_]+)[ \t]*:/.exec(line);
      if (name) modules.push(name[1]!);
    }
  }
  const dir = dataDir ? (dataDir[1] ?? dataDir[2] ?? dataDir[3] ?? 'data') : 'data';
  return { dataDir: resolve(dirname(path), dir), modules };
}
