/**
 * compile: type-checks a plugin's TypeScript source file against the running server's plugin API, emits
 * its JavaScript, and lets the caller reload the module. TypeScript runs as the `tsc` executable in a child
 * process (TypeScript 7 is native and has no in-process API), so a compilation never blocks the event loop.
 *
 * The file's module is found by walking up to the package.json that names it (`"service": { "module" }`)
 * and must be where the catalog loads that module from: a local plugin under `<data_dir>/plugins/<name>/`
 * or a built-in module. Installed plugins are immutable (publish a new version instead). The plugin's own
 * tsconfig.json is used, extended so that `@service/plugin-api` resolves to the server's declarations; a
 * plugin without one is compiled file by file beside its sources.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { badArgument, failed } from '@service/plugin-api';
import { isFile, type ModuleCatalog } from './catalog.js';

const run = promisify(execFile);

/** The plugin API's declarations, which a plugin is checked against. */
const PLUGIN_API_TYPES = fileURLToPath(new URL('../../plugin-api/dist/index.d.ts', import.meta.url));
const NODE_TYPES = fileURLToPath(new URL('../../../node_modules/@types/', import.meta.url));

export interface CompiledModule {
  readonly module: string;
  /** The JavaScript files written, relative to the module's directory. */
  readonly emitted: readonly string[];
}

export async function compilePluginSource(catalog: ModuleCatalog, path: string, dataDir: string): Promise<CompiledModule> {
  const file = isAbsolute(path) ? path : resolve(dataDir, path);
  if (!/\.(m|c)?ts$/.test(file) || /\.d\.(m|c)?ts$/.test(file)) throw badArgument('file', `argument 'file' ('${path}') is not a TypeScript source file (.ts)`);
  if (!(await isFile(file))) throw badArgument('file', `argument 'file': ${file} does not exist`);
  const { module, dir } = await owningModule(file, path);
  const location = await catalog.locate(module).catch(() => undefined);
  if (!location || location.dir !== dir) throw badArgument('file', `argument 'file': ${file} belongs to ${module} in ${dir}, which is not where this server loads ${module} from${location ? ` (${location.dir})` : ''}`);
  if (location.source === 'installed') throw failed(`${module} was installed from a registry and its files are immutable: publish a new version and run module_upgrade`);

  const tsc = typescriptCompiler();
  const hasOwnConfig = await isFile(join(dir, 'tsconfig.json'));
  const config = join(dir, `.compile-${randomBytes(4).toString('hex')}.tsconfig.json`);
  const compilerOptions = {
    paths: { '@service/plugin-api': [PLUGIN_API_TYPES] },
    typeRoots: [NODE_TYPES],
    noEmitOnError: true,
    listEmittedFiles: true,
    pretty: false,
    ...(hasOwnConfig ? {} : { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true }),
  };
  await writeFile(config, JSON.stringify({ ...(hasOwnConfig ? { extends: './tsconfig.json' } : {}), compilerOptions, files: [relative(dir, file)], include: [] }));
  let output: string;
  try {
    output = (await run(process.execPath, [tsc, '-p', config], { cwd: dir, timeout: 5 * 60_000, maxBuffer: 16 * 1024 * 1024 })).stdout;
  } catch (err) {
    const out = `${(err as { stdout?: string }).stdout ?? ''}${(err as { stderr?: string }).stderr ?? ''}`;
    const errors = diagnostics(out, dir);
    if (errors.length) throw failed(`${relative(dir, file)} does not compile (${errors.length} error${errors.length > 1 ? 's' : ''}): ${errors.join('; ')}`);
    throw failed(`tsc failed on ${file}: ${out.trim().split('\n').slice(-3).join(' ') || (err as Error).message}`);
  } finally {
    await rm(config, { force: true });
  }
  const emitted = output
    .split('\n')
    .map((line) => /^TSFILE: (.*)$/.exec(line.trim())?.[1])
    .filter((f): f is string => f !== undefined)
    .map((f) => relative(dir, f));
  return { module, emitted };
}

/** tsc's `path(line,col): error TSnnnn: message` lines, as `path:line:col: TSnnnn message`. */
function diagnostics(output: string, dir: string): string[] {
  const out: string[] = [];
  for (const line of output.split('\n')) {
    const m = /^(.+?)\((\d+),(\d+)\): error (TS\d+): (.*)$/.exec(line.trim());
    if (m) out.push(`${relative(dir, resolve(dir, m[1]!))}:${m[2]}:${m[3]}: ${m[4]} ${m[5]}`);
  }
  return out;
}

async function owningModule(file: string, given: string): Promise<{ module: string; dir: string }> {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { service?: { module?: string } };
      if (pkg.service?.module) return { module: pkg.service.module, dir };
    } catch {
      // No package.json here: go up.
    }
    if (dirname(dir) === dir) throw badArgument('file', `argument 'file': ${given} is not in a module (no package.json with "service": { "module" } above it)`);
  }
}

function typescriptCompiler(): string {
  try {
    // The package's exports do not include bin/: find it from package.json.
    return join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');
  } catch {
    throw failed('compile needs the typescript package beside the server (npm install typescript)');
  }
}

