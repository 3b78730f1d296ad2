/**
 * Driving the shared load kit (../shared/bench-kit) from this repository: its bench/run.sh with this server's
 * profile (bench/side-by-side/service.env) or an ejabberd one, the server's configuration for the run, and the
 * kit's summaries. Shared by bench/side-by-side/run.ts and bench/muc/run.ts, so that both run the kit, and
 * this server under it, the same way.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parse, stringify } from 'yaml';
import { REPO, requireBuild } from '../api/lib.js';

/** Our profile: the kit's, with every worker's pid measured (service.env here). */
export const OURS = join(REPO, 'bench/side-by-side/service.env');

/** A kit summary.json: the scenario's rows, each figure a { median, min, max, n } over the repetitions. */
export type Summary = { label: string; run_dir?: string; rows: Array<Record<string, any>> };

/** The name a profile goes by in file names and reports: `service` for ours, the kit's profile name otherwise. */
export const profileName = (profile: string) => (profile === OURS ? 'service' : profile);

/** The median of a kit summary cell, when there is one. */
export const median = (cell: any): number | undefined => (typeof cell?.median === 'number' ? cell.median : undefined);

/** A number for a table: `n/a` when missing, thousands separated, `digits` decimals. */
export const format = (value: number | undefined, digits = 1) =>
  value === undefined ? 'n/a' : value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

export type KitRunOptions = {
  reps: string;
  quick?: boolean;
  /** Extra environment for run.sh (the scenario's knobs: MUC_N, MUC_RATES…). */
  env?: Record<string, string>;
  /** run.sh's --no-reset: run on the server as it is (started by the caller) instead of a fresh one per repetition. */
  noReset?: boolean;
  /** The result directory's name under `dir` (default `<profile>-<scenario>`). */
  name?: string;
  /**
   * When the kit fails but left every repetition's result: summarize them here rather than throw. run.sh exits 1
   * when a repetition's last try was disturbed by other processes (`[ "$try" -lt "$TRIES" ] && mv …` is the
   * loop's last command), after measuring it; `disturbed` in the answer says so.
   */
  summarizeDisturbed?: boolean;
};

/**
 * The kit at `kitDir`, running this server with its data and configuration under `svcDir` (SVC_DIR and
 * SVC_CONFIG, which service.env reads).
 */
export class Kit {
  readonly dir: string;
  readonly runSh: string;
  readonly svcDir: string;
  readonly svcConfig: string;

  /** The prefix of the lines this prints on stderr. */
  readonly tag: string;

  constructor(kitDir: string, svcDir: string, tag = 'kit') {
    this.tag = tag;
    this.dir = resolve(kitDir);
    this.runSh = join(this.dir, 'bench/run.sh');
    this.svcDir = svcDir;
    this.svcConfig = join(svcDir, 'config.yml');
  }

  /** What every run needs: the server built, the kit, ejabberd installed. Throws with the fix otherwise. */
  check(): void {
    requireBuild();
    if (!existsSync(this.runSh)) throw new Error(`no load kit at ${this.dir} (bench/run.sh): pass --kit`);
    if (!existsSync('/usr/sbin/ejabberdctl')) throw new Error(`ejabberd is not installed: run ${join(this.dir, 'ejabberd/install.sh')} as root first`);
  }

  /** The environment run.sh and the profiles run with: the project root and this server's directory and configuration. */
  env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return { ...process.env, SVC_ROOT: REPO, SVC_DIR: this.svcDir, SVC_CONFIG: this.svcConfig, ...extra };
  }

  /** The profile file run.sh would source for `profile` (a kit profile name or a path). */
  profileFile(profile: string): string {
    const named = join(this.dir, 'bench/targets', `${profile}.env`);
    return existsSync(named) ? named : profile;
  }

  /** Runs the kit's run.sh with these arguments from the project root; its output goes to `logFile`. */
  run(args: string[], logFile: string, env: Record<string, string> = {}): Promise<number> {
    return this.#spawn('bash', [this.runSh, ...args], logFile, env).then(({ code }) => code);
  }

  /**
   * Sources `profile` as run.sh does and runs `script` (bash) with its functions and variables
   * (target_reset, target_pid, API_BASE…). Its stderr goes to `logFile`; its stdout is returned.
   */
  async profileShell(profile: string, script: string, logFile: string): Promise<string> {
    const env = { BENCH_DIR: join(this.dir, 'bench') };
    const { code, stdout } = await this.#spawn('bash', ['-c', `set -euo pipefail; . "$0"\n${script}`, this.profileFile(profile)], logFile, env, true);
    if (code !== 0) throw new Error(`${profileName(profile)}: \`${script.trim().split('\n')[0]}\` failed (exit ${code}): see ${logFile}`);
    return stdout;
  }

  /**
   * Runs one scenario against one profile, then stops the profile's server; the kit's results land in
   * `dir/<name>`. Throws when the kit fails.
   */
  async runScenario(scenario: string, profile: string, dir: string, options: KitRunOptions): Promise<{ summary: Summary; out: string; logFile: string; disturbed: boolean }> {
    const name = options.name ?? `${profileName(profile)}-${scenario}`;
    const out = join(dir, name);
    const logFile = join(dir, `${name}.log`);
    console.error(`[${this.tag}] ${scenario} against ${profileName(profile)} (log: ${logFile})`);
    const code = await this.run([scenario, '--target', profile, '--reps', options.reps, ...(options.quick ? ['--quick'] : []), ...(options.noReset ? ['--no-reset'] : []), '--out', out], logFile, options.env);
    await this.run(['stop', '--target', profile], logFile);
    if (code !== 0) {
      const reps = Number(options.reps);
      const left = Array.from({ length: reps }, (_, i) => existsSync(join(out, `rep${i + 1}.json`))).every(Boolean);
      const disturbed = left && /other processes used \d+% of a core/.test(await readFile(logFile, 'utf8').catch(() => ''));
      if (!options.summarizeDisturbed || !disturbed) throw new Error(`the kit's ${scenario} against ${profileName(profile)} failed (exit ${code}): see ${logFile}`);
      console.error(`[${this.tag}] the kit exited ${code} after the last try of a repetition was disturbed by other processes: summarizing what it measured`);
      await this.summarize(scenario, profile, out, logFile);
      return { summary: JSON.parse(await readFile(join(out, 'summary.json'), 'utf8')) as Summary, out, logFile, disturbed: true };
    }
    return { summary: JSON.parse(await readFile(join(out, 'summary.json'), 'utf8')) as Summary, out, logFile, disturbed: false };
  }

  /** The kit's summarize.py over the results in `out` (summary.json and summary.md there), as run.sh ends a scenario. */
  async summarize(scenario: string, profile: string, out: string, logFile: string): Promise<void> {
    const label = (await this.profileShell(profile, 'echo "$TARGET_LABEL"', logFile)).trim();
    const name = profile === OURS ? 'service' : profile.replace(/^.*\//, '').replace(/\.env$/, '');
    const { code, stdout } = await this.#spawn('python3', [join(this.dir, 'bench/lib/summarize.py'), scenario, out, name, label], logFile, {}, true);
    if (code !== 0) throw new Error(`the kit's summarize.py failed on ${out} (exit ${code}): see ${logFile}`);
    await writeFile(join(out, 'summary.md'), stdout);
  }

  /**
   * The kit's configuration (config.example.yml with bench ports) with config.example.yml's `workers` (or
   * the given `workersOption`, from --workers) and `modules`: operators run the example's settings, and the kit's copy predates both the
   * option and the modules added since (group chat, for muc-fanout). `require` adds modules the example lacks
   * (with these options); the names added are returned. `overrides` sets options of listed modules.
   */
  async writeServerConfig(
    workersOption?: string,
    require: Record<string, unknown> = {},
    /** Options set on modules of the example (merged over theirs): what a scenario needs both servers to allow. */
    overrides: Record<string, Record<string, unknown>> = {},
    /** Modules of the example left out: mod_mam, when ejabberd runs without MAM (the kit's ejabberd-nomam). */
    without: readonly string[] = [],
    /** Top-level options set over the kit's (`auth_password_format: plain`, say). */
    topLevel: Record<string, unknown> = {},
  ): Promise<{ workers: string; added: string[] }> {
    const config = parse(await readFile(join(this.dir, 'bench/targets/service/config.yml'), 'utf8')) as Record<string, unknown>;
    const example = parse(await readFile(join(REPO, 'config.example.yml'), 'utf8')) as Record<string, unknown>;
    const workers = workersOption ?? String(example.workers ?? 1);
    config.workers = /^\d+$/.test(workers) ? Number(workers) : workers;
    config.modules = example.modules;
    const added = Object.keys(require).filter((name) => !(name in ((config.modules as Record<string, unknown> | undefined) ?? {})));
    if (added.length > 0) config.modules = { ...((config.modules as Record<string, unknown> | undefined) ?? {}), ...Object.fromEntries(added.map((name) => [name, require[name]])) };
    const modules = config.modules as Record<string, Record<string, unknown> | null>;
    for (const [name, options] of Object.entries(overrides)) modules[name] = { ...(modules[name] ?? {}), ...options };
    for (const name of without) delete modules[name];
    Object.assign(config, topLevel);
    config.data_dir = join(this.svcDir, 'data');
    await mkdir(this.svcDir, { recursive: true });
    await writeFile(this.svcConfig, stringify(config));
    return { workers, added };
  }

  #spawn(command: string, args: string[], logFile: string, env: Record<string, string>, captureStdout = false): Promise<{ code: number; stdout: string }> {
    return new Promise((resolvePromise, reject) => {
      const out = createWriteStream(logFile, { flags: 'a' });
      const child = spawn(command, args, { cwd: REPO, env: this.env(env), stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      if (captureStdout) child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      else child.stdout.pipe(out, { end: false });
      child.stderr.pipe(out, { end: false });
      child.on('error', reject);
      // 'exit', not 'close': a server the kit starts may inherit the pipes and outlive the script.
      child.on('exit', (code) => {
        let finished = false;
        const done = () => {
          if (finished) return;
          finished = true;
          out.end();
          resolvePromise({ code: code ?? 1, stdout });
        };
        if (!captureStdout || child.stdout.readableEnded) done();
        else {
          const timer = setTimeout(done, 1000);
          child.stdout.once('end', () => {
            clearTimeout(timer);
            done();
          });
        }
      });
    });
  }
}
