/**
 * What the client interop matrix needs around XMPP software nobody here wrote: external clients run as child
 * processes (each with a hard timeout, its output kept, and JSON-line events read from stdout where the helper
 * script prints them), so that a failure shows what the client itself logged; and the tiny static HTTP server
 * that serves the Converse.js page and the npm package's dist/ to the browser.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, extname, join, normalize, sep } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/** The test CA the clients verify the server's certificate against, and where the helper scripts are. */
export const CA = new URL('../fixtures/tls/ca.pem', import.meta.url).pathname;
export const SCRIPTS = new URL('./clients/', import.meta.url).pathname;
/** Debian's Python, which has the Debian packages (the pyenv python3 on PATH does not). */
export const PYTHON = '/usr/bin/python3';
export const GO_SENDXMPP = '/usr/bin/go-sendxmpp';
export const CHROMIUM = '/usr/bin/chromium';

/** The installed version of a Debian package, for the test titles ("not installed" makes every test of it fail). */
export function debianVersion(pkg: string): string {
  try {
    return execFileSync('dpkg-query', ['-W', '-f=${Version}', pkg], { encoding: 'utf8' }) || 'not installed';
  } catch {
    return 'not installed';
  }
}

/** The installed version of an npm package, from its package.json (not all of them export it). */
export function npmVersion(pkg: string): string {
  for (const dir of createRequire(import.meta.url).resolve.paths(pkg) ?? []) {
    try {
      return (JSON.parse(readFileSync(join(dir, pkg, 'package.json'), 'utf8')) as { version: string }).version;
    } catch {
      // Not in this node_modules: the next one up.
    }
  }
  return 'not installed';
}

/** One JSON line a helper script printed: `{"event": "...", ...}`. */
export type ClientEvent = { event: string } & Record<string, any>;

export interface SpawnOptions {
  env?: Record<string, string>;
  /** Killed (SIGKILL) after this long, whatever it is doing. */
  timeoutMs?: number;
  /** Text written to its standard input, which is then closed. */
  stdin?: string;
}

/** Every external client still running, so that a hook can end them all. */
const running = new Set<ExternalClient>();

/** Kills every external client a test left running (an afterEach hook calls this). */
export async function killAll(): Promise<void> {
  await Promise.all([...running].map((c) => c.kill()));
}

export class ExternalClient {
  readonly events: ClientEvent[] = [];
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
  private readonly child: ChildProcess;
  private readonly listeners = new Set<() => void>();
  private timedOut = false;

  private constructor(
    readonly name: string,
    readonly argv: string[],
    options: SpawnOptions,
  ) {
    this.child = spawn(argv[0]!, argv.slice(1), {
      env: { ...process.env, ...options.env },
      stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (options.stdin !== undefined) this.child.stdin!.end(options.stdin);
    let partial = '';
    this.child.stdout!.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      this.stdout += text;
      partial += text;
      const lines = partial.split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        if (!line.startsWith('{')) continue;
        try {
          this.events.push(JSON.parse(line));
        } catch {
          // Not one of the helper's lines: it stays in stdout.
        }
      }
      this.notify();
    });
    this.child.stderr!.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString('utf8');
    });
    const timer = setTimeout(() => {
      this.timedOut = true;
      this.child.kill('SIGKILL');
    }, options.timeoutMs ?? 30_000);
    this.exited = new Promise((resolve) => {
      this.child.once('error', (err) => {
        this.stderr += `\n[spawn failed: ${err.message}]`;
      });
      this.child.once('close', (code, signal) => {
        clearTimeout(timer);
        running.delete(this);
        this.notify();
        resolve({ code, signal });
      });
    });
    running.add(this);
  }

  static spawn(name: string, argv: string[], options: SpawnOptions = {}): ExternalClient {
    return new ExternalClient(name, argv, options);
  }

  get done(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** The first event that matches, waiting for it; rejects with the client's output if it never comes. */
  async event(what: string, predicate: (e: ClientEvent) => boolean, ms = 20_000): Promise<ClientEvent> {
    return this.until(what, () => this.events.find(predicate), ms);
  }

  /** The first stdout match of `pattern`, waiting for it. */
  async output(what: string, pattern: RegExp, ms = 20_000): Promise<RegExpMatchArray> {
    return this.until(what, () => pattern.exec(this.stdout) ?? undefined, ms);
  }

  /** Resolves with the exit status once it has exited by itself; rejects (with its output) after `ms`. */
  async exit(ms = 20_000): Promise<{ code: number | null; signal: string | null }> {
    await this.until('the client to exit', () => (this.done ? true : undefined), ms);
    return this.exited;
  }

  /** The command, how it ended, its stdout and the end of its stderr (a debug log can be long). */
  diagnostics(note = ''): string {
    const status = this.done ? `exit ${this.child.exitCode ?? this.child.signalCode}${this.timedOut ? ' (killed: timed out)' : ''}` : 'still running';
    const tail = this.stderr.length > 20_000 ? `[…${this.stderr.length - 20_000} earlier characters cut]\n${this.stderr.slice(-20_000)}` : this.stderr;
    return `${note}${note ? '\n' : ''}--- ${this.name}: ${this.argv.join(' ')} (${status})\n--- stdout:\n${this.stdout}\n--- stderr:\n${tail}\n--- end of ${this.name} output`;
  }

  async kill(): Promise<void> {
    if (!this.done) this.child.kill('SIGKILL');
    await this.exited;
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  private until<T>(what: string, probe: () => T | undefined, ms: number): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = probe();
        if (found !== undefined) {
          finish();
          resolve(found);
        } else if (this.done) {
          finish();
          reject(new Error(this.diagnostics(`${this.name} exited before ${what}`)));
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(this.diagnostics(`timed out after ${ms} ms waiting for ${what}`)));
      }, ms);
      const finish = () => {
        clearTimeout(timer);
        this.listeners.delete(check);
      };
      this.listeners.add(check);
      check();
    });
  }
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.css': 'text/css',
  '.json': 'application/json',
  '.map': 'application/json',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.mp3': 'audio/mpeg',
  '.ogg': 'audio/ogg',
};

/** The converse.js package's dist/ directory, as npm installed it. */
export const CONVERSE_DIST = dirname(createRequire(import.meta.url).resolve('converse.js/dist/converse.min.js'));
export const CONVERSE_PAGE = new URL('./converse/index.html', import.meta.url).pathname;

/**
 * Serves the Converse page at `/` and converse.js's dist/ at `/dist/` on a free loopback port; nothing else.
 * Resolves with the server and its port.
 */
export async function serveConverse(): Promise<{ server: Server; port: number }> {
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://localhost').pathname);
    let file: string | undefined;
    if (path === '/' || path === '/index.html') file = CONVERSE_PAGE;
    else if (path.startsWith('/dist/')) {
      const candidate = normalize(join(CONVERSE_DIST, path.slice('/dist/'.length)));
      if (candidate.startsWith(CONVERSE_DIST + sep)) file = candidate;
    }
    try {
      if (!file) throw new Error('not served');
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found\n');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port };
}

/**
 * Converse.js in Debian's headless Chromium, for one describe block: the page is served before its tests,
 * the browser closed after each (its console printed when the test failed: a locator that timed out says
 * nothing of why) and the page server after them all. `logIn` opens the page and logs in through Converse's
 * login form, as a person does; `diagnostics()` is the browser console so far.
 */
export function converseInBrowser(websocket: () => string): {
  logIn(jid: string, secret: string, mechanism?: string): Promise<Page>;
  diagnostics(): string;
} {
  let browser: Browser | undefined;
  let site: { server: Server; port: number } | undefined;
  let consoleLog: string[] = [];
  const diagnostics = () => `--- Converse.js browser console:\n${consoleLog.join('\n')}`;
  before(async () => {
    site = await serveConverse();
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed') console.log(diagnostics());
    await browser?.close();
    browser = undefined;
  });
  after(async () => {
    if (site) await new Promise((resolve) => site!.server.close(resolve));
  });
  return {
    diagnostics,
    async logIn(jid, secret, mechanism) {
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
      const page = await browser.newPage();
      page.setDefaultTimeout(15_000);
      consoleLog = [];
      page.on('console', (m) => consoleLog.push(`${m.type()}: ${m.text()}`));
      page.on('pageerror', (err) => consoleLog.push(`pageerror: ${err.message}`));
      // Only the page's own server and ours: Converse's page refers to a few images elsewhere.
      await page.route(/^https?:\/\/(?!127\.0\.0\.1[:/])/, (route) => route.abort());
      const query = new URLSearchParams({ ws: websocket(), ...(mechanism ? { mechanism } : {}) });
      await page.goto(`http://127.0.0.1:${site!.port}/?${query}`);
      await page.locator('#converse-login-jid').fill(jid);
      await page.locator('#converse-login-password').fill(secret);
      await page.locator('#converse-login [type=submit]').click();
      return page;
    },
  };
}
