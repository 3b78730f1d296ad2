/**
 * Starts the real server in this process on free ports, with a temporary data directory and a
 * configuration written to a real YAML file, and talks to it over real HTTP. Logs are kept in memory so
 * tests can assert what was logged (and what never was).
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { stringify } from 'yaml';
import { Server, createLogger, type Logger } from '@service/kernel';
import type { SqlSettings } from '../../kernel/src/storage/database.js';

export const FIXTURE_PLUGINS = new URL('../fixtures/plugins/', import.meta.url).pathname;

export type RawConfig = Record<string, unknown>;

/** A configuration that serves /api on a free loopback port, with an admin ACL and loopback access to status. */
export function baseConfig(): RawConfig {
  return {
    hosts: ['localhost', 'example.com'],
    loglevel: 'info',
    // Every SCRAM mechanism is tested, so every hash is stored (the default, one hash, has its own test).
    auth_scram_hash: ['sha', 'sha256', 'sha512'],
    listen: [{ port: 0, ip: '127.0.0.1', module: 'service_http', request_handlers: { '/api': 'mod_http_api' } }],
    acl: {
      admin: { user: 'admin@localhost' },
      loopback: { ip: ['127.0.0.0/8', '::1/128'] },
    },
    api_permissions: {
      'public commands': { who: { acl: 'loopback' }, what: ['status', 'connected_users_number'] },
      'admin access': { who: { acl: 'admin' }, what: '*' },
    },
    modules: { mod_http_api: {} },
  };
}

export function sqlConfig(sql: SqlSettings): RawConfig {
  if (sql.type === 'sqlite') return { sql_type: 'sqlite', sql_database: sql.database };
  return {
    sql_type: sql.type,
    sql_server: sql.server,
    sql_port: sql.port,
    sql_database: sql.database,
    sql_username: sql.username,
    sql_password: sql.password,
  };
}

/**
 * The SQL options of a test server on `sql`: on SQLite the server keeps its embedded database in its own
 * data directory, so the file the settings name is not used.
 */
export function serverSqlConfig(sql: SqlSettings): RawConfig {
  const config = sqlConfig(sql);
  if (sql.type === 'sqlite') delete config.sql_database;
  return config;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON, or the raw text when the body is not JSON. */
  body: any;
  text: string;
}

export interface CallOptions {
  /** `user@host:password` for HTTP Basic. */
  basic?: string;
  authorization?: string;
  method?: string;
  /** A raw body instead of JSON.stringify(args). */
  raw?: string | Buffer;
  /** Path prefix, e.g. `/api/v2`. */
  prefix?: string;
  headers?: Record<string, string>;
}

export class TestServer {
  readonly logs: Array<Record<string, any>> = [];

  private constructor(
    readonly server: Server,
    readonly dir: string,
    readonly configFile: string,
    logs: Array<Record<string, any>>,
  ) {
    this.logs = logs;
  }

  /**
   * Starts a server; `plugins` are fixture modules copied into the data directory's plugins/, and `prepare`
   * may change the data directory before the server starts.
   */
  static async start(config: RawConfig = baseConfig(), options: { plugins?: string[]; prepare?: (dataDir: string) => Promise<void> } = {}): Promise<TestServer> {
    const dir = await mkdtemp(join(tmpdir(), 'service-test-'));
    const configFile = join(dir, 'service.yml');
    await writeFile(configFile, stringify({ data_dir: join(dir, 'data'), ...config }));
    await installPlugins(join(dir, 'data'), options.plugins ?? []);
    await options.prepare?.(join(dir, 'data'));
    const logs: Array<Record<string, any>> = [];
    const logger = memoryLogger(logs);
    try {
      const server = await Server.start({ configFile, logger, onExit: () => {} });
      return new TestServer(server, dir, configFile, logs);
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
  }

  get port(): number {
    return this.server.portOf('service_http')!;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** POST /api/<command> with a JSON body (or GET with query parameters when method is GET). */
  async api(command: string, args: Record<string, unknown> = {}, options: CallOptions = {}): Promise<ApiResponse> {
    const method = options.method ?? 'POST';
    const prefix = options.prefix ?? '/api';
    let path = `${prefix}/${command}`;
    const headers: Record<string, string> = { ...options.headers };
    if (options.basic) headers.authorization = `Basic ${Buffer.from(options.basic).toString('base64')}`;
    if (options.authorization) headers.authorization = options.authorization;
    let body: string | Buffer | undefined;
    if (method === 'GET') {
      const query = new URLSearchParams(Object.entries(args).map(([k, v]): [string, string] => [k, String(v)])).toString();
      if (query) path += `?${query}`;
    } else if (method !== 'OPTIONS') {
      body = options.raw ?? JSON.stringify(args);
      headers['content-type'] ??= 'application/json';
    }
    return request(this.url(path), { method, headers, body });
  }

  /** Registers an account through the API as the admin would. */
  async register(user: string, host: string, password: string, admin = 'admin@localhost:adminpass'): Promise<void> {
    const res = await this.api('register', { user, host, password }, { basic: admin });
    if (res.status !== 200) throw new Error(`register ${user}@${host}: ${res.status} ${res.text}`);
  }

  /** Creates admin@localhost directly through the account service (the bootstrap an operator does with servicectl). */
  async bootstrapAdmin(password = 'adminpass'): Promise<void> {
    await this.server.services.accounts.register('admin', 'localhost', password);
  }

  /** Rewrites the configuration file (same data directory). */
  async writeConfig(config: RawConfig): Promise<void> {
    await writeFile(this.configFile, stringify({ data_dir: join(this.dir, 'data'), ...config }));
  }

  async installPlugins(names: string[]): Promise<void> {
    await installPlugins(join(this.dir, 'data'), names);
  }

  logged(predicate: (line: Record<string, any>) => boolean): Array<Record<string, any>> {
    return this.logs.filter(predicate);
  }

  async stop(): Promise<void> {
    await this.server.shutdown();
    await rm(this.dir, { recursive: true, force: true });
  }
}

async function installPlugins(dataDir: string, names: string[]): Promise<void> {
  if (!names.length) return;
  await mkdir(join(dataDir, 'plugins'), { recursive: true });
  for (const name of names) await cp(join(FIXTURE_PLUGINS, name), join(dataDir, 'plugins', name), { recursive: true });
}

export async function request(url: string, init: { method: string; headers?: Record<string, string>; body?: string | Buffer }): Promise<ApiResponse> {
  const res = await fetch(url, { method: init.method, headers: init.headers, body: init.body });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: keep the text.
  }
  return { status: res.status, headers: res.headers, body, text };
}

/** The server's own logger (same redaction), appending each line, parsed, to `lines`. */
export function memoryLogger(lines: Array<Record<string, any>>): Logger {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return createLogger({ level: 'debug', destination: sink });
}
