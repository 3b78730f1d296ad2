/**
 * servicectl as a real process against a real server process: argument forms, output, --json equality
 * with /api, exit statuses, help, CLI-only commands, log level and rotation, progress on a terminal.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdir, readFile, rename, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cp } from 'node:fs/promises';
import { request } from '../support/server.js';
import { openConfig, spawnServer, SERVICECTL, type ServerProcess } from '../support/process.js';
import { servicectl, servicectlOnTty } from '../support/cli.js';
import { FIXTURE_PLUGINS } from '../support/server.js';
import { RECORD_MODULES, SERVER_CODE, readLoaded } from '../support/loaded-modules.js';

describe('servicectl', () => {
  let proc: ServerProcess;
  const ctl = (...args: string[]) => servicectl(proc.configFile, ...args);
  const api = async (command: string, args: Record<string, unknown>) =>
    (await request(`http://127.0.0.1:${proc.port}/api/${command}`, { method: 'POST', body: JSON.stringify(args) })).body;

  before(async () => {
    proc = await spawnServer((port, dir) => {
      const config = openConfig(port);
      config.hosts = ['localhost', 'example.com'];
      config.modules = { mod_http_api: {}, mod_fixture: {} };
      config.log_rotate_count = 2;
      void dir;
      return config;
    }, undefined, async (dir) => {
      await mkdir(join(dir, 'data', 'plugins'), { recursive: true });
      await cp(join(FIXTURE_PLUGINS, 'mod_fixture'), join(dir, 'data', 'plugins', 'mod_fixture'), { recursive: true });
    });
  });
  after(() => proc.cleanup());

  describe('arguments and output', () => {
    it('takes positional arguments and prints strings raw', async () => {
      const res = await ctl('register', 'alice', 'localhost', 'pw with spaces');
      expect(res).to.deep.include({ code: 0, stdout: 'User alice@localhost successfully registered\n', stderr: '' });
      const extra = await ctl('status', 'extra');
      expect(extra.code).to.equal(2);
      expect(extra.stderr).to.equal('servicectl: status takes no arguments\n');
    });

    it('prints lists one item per line, integers as numbers, ST as nothing', async () => {
      await ctl('register', 'bob', 'localhost', 'pw');
      expect((await ctl('registered_users', 'localhost')).stdout).to.equal('alice\nbob\n');
      expect((await ctl('fixture_echo', 'ab', '2')).stdout).to.equal('abab\n');
      const gc = await ctl('gc');
      expect(gc).to.deep.include({ code: 0, stdout: '' });
    });

    it('takes a trailing list from the remaining words, a non-last list comma-separated, objects as name=value', async () => {
      const res = await ctl('--json', 'fixture_forms', 'lbl', 'a,b,c', 'x=1;y=2', 'name=Ann,age=42', 'one', 'two', 'three');
      expect(res.code, res.stderr).to.equal(0);
      expect(JSON.parse(res.stdout)).to.deep.equal({
        label: 'lbl',
        tags: ['a', 'b', 'c'],
        options: [
          { name: 'x', value: '1' },
          { name: 'y', value: '2' },
        ],
        person: { name: 'Ann', age: 42 },
        items: ['one', 'two', 'three'],
      });
    });

    it('takes JSON for list and object arguments, and an empty trailing list', async () => {
      const res = await ctl('--json', 'fixture_forms', 'lbl', '["a"]', '[{"name":"k","value":"v"}]', '{"name":"Bo","age":7}');
      expect(JSON.parse(res.stdout)).to.deep.equal({ label: 'lbl', tags: ['a'], options: [{ name: 'k', value: 'v' }], person: { name: 'Bo', age: 7 }, items: [] });
    });

    it('takes trailing name=value pairs (create_room_with_opts style) and prints lists of objects as aligned columns', async () => {
      const res = await ctl('fixture_room', 'lobby', 'members_only=true', 'title=The Lobby');
      expect(res.code, res.stderr).to.equal(0);
      expect(res.stdout).to.equal('name          value\nmembers_only  true\ntitle         The Lobby\n');
    });

    it('prints an object as aligned name/value lines', async () => {
      const res = await ctl('fixture_forms', 'l', 't', 'a=b', 'name=Al,age=3', 'i1', 'i2');
      expect(res.stdout).to.equal(['label    l', 'tags     t', 'options  {"name":"a","value":"b"}', 'person   {"name":"Al","age":3}', 'items    i1,i2', ''].join('\n'));
    });

    it('--json prints exactly what /api returns', async () => {
      for (const [command, argv, args] of [
        ['registered_users', ['localhost'], { host: 'localhost' }],
        ['status', [], {}],
        ['fixture_room', ['r', 'a=1'], { room: 'r', options: [{ name: 'a', value: '1' }] }],
        ['get_loglevel', [], {}],
      ] as const) {
        const res = await ctl('--json', command, ...argv);
        expect(res.stdout, command).to.equal(`${JSON.stringify(await api(command, args))}\n`);
      }
    });
  });

  describe('exit statuses', () => {
    it('is 1 when an ST command answers 1', async () => {
      expect((await ctl('fixture_answer', 'yes')).code).to.equal(0);
      expect((await ctl('fixture_answer', 'no')).code).to.equal(1);
    });

    it('is 2 for usage errors, with the synopsis', async () => {
      const missing = await ctl('registered_users');
      expect(missing.code).to.equal(2);
      expect(missing.stderr).to.equal('servicectl: missing argument <host> (Local vhost); usage: servicectl registered_users <host>\n');
      const extra = await ctl('registered_users', 'localhost', 'extra');
      expect(extra.code).to.equal(2);
      expect(extra.stderr).to.match(/too many arguments for registered_users: "extra"/);
      const type = await ctl('fixture_echo', 'a', 'many');
      expect(type.code).to.equal(2);
      expect(type.stderr).to.match(/argument 'times' must be an integer, got "many"/);
      expect((await ctl('--nope', 'status')).code).to.equal(2);
    });

    it('is 4 for an unknown command, with a did-you-mean', async () => {
      const res = await ctl('regster', 'a', 'b', 'c');
      expect(res.code).to.equal(4);
      expect(res.stderr).to.equal('servicectl: unknown command regster (did you mean register?): servicectl help lists the commands\n');
    });

    it('is 1 for a failure, with its message', async () => {
      const res = await ctl('register', 'alice', 'localhost', 'x');
      expect(res.code).to.equal(1);
      expect(res.stderr).to.equal('servicectl: account alice@localhost already exists\n');
    });

    it('prints the /api error envelope on stdout with --json', async () => {
      const res = await ctl('--json', 'unregister', 'nobody', 'localhost');
      expect(res.code).to.equal(1);
      expect(JSON.parse(res.stdout)).to.deep.equal({ status: 'error', code: 45, message: 'account nobody@localhost does not exist' });
    });
  });

  describe('help', () => {
    it('lists the commands grouped by tag', async () => {
      const res = await ctl('help');
      expect(res.code).to.equal(0);
      // The accounts tag, with its commands indented below it, register among them.
      expect(res.stdout).to.match(/^accounts\n(  \S+ +.+\n)*  register +Register an account$/m);
      expect(res.stdout).to.include('fixture_forms');
    });

    it('documents a command: arguments with types and forms, result, examples, module', async () => {
      const res = await ctl('help', 'fixture_forms');
      expect(res.code).to.equal(0);
      expect(res.stdout).to.include('servicectl fixture_forms <label> <tags,...> <options,...> <person> <items>...');
      expect(res.stdout).to.include('one word, elements separated by commas');
      expect(res.stdout).to.include("one word, elements separated by ';': name=value");
      expect(res.stdout).to.include('the remaining words, one element each');
      expect(res.stdout).to.match(/mod_fixture/);
      const register = await ctl('help', 'register');
      expect(register.stdout).to.include('$ servicectl register bob localhost SomEPass44');
      expect(register.stdout).to.include('User bob@localhost successfully registered');
    });

    it('lists a tag\'s commands, and suggests on a typo', async () => {
      const tag = await ctl('help', 'logs');
      expect(tag.stdout).to.include('rotate_log').and.include('set_loglevel');
      const typo = await ctl('help', 'regisetr');
      expect(typo.code).to.equal(2);
      expect(typo.stderr).to.match(/did you mean 'register'/i);
    });
  });

  describe('command-line-only commands', () => {
    it('are refused over HTTP with a clear error', async () => {
      for (const command of ['print_sql_schema', 'mnesia_info_ctl', 'mnesia_change', 'help']) {
        const res = await request(`http://127.0.0.1:${proc.port}/api/${command}`, { method: 'POST', body: '{}' });
        expect(res.status, command).to.be.oneOf([400, 403]);
        if (res.status === 403) expect(res.body.message, command).to.match(/can only be run from the command line/);
      }
      const res = await request(`http://127.0.0.1:${proc.port}/api/print_sql_schema`, {
        method: 'POST',
        body: JSON.stringify({ db_type: 'sqlite', db_version: '3', new_schema: '1' }),
      });
      expect(res.status).to.equal(403);
      expect(res.body.message).to.equal('print_sql_schema can only be run from the command line (servicectl print_sql_schema)');
    });

    it('print_sql_schema prints the tables of the kernel and the enabled modules', async () => {
      for (const type of ['pgsql', 'mysql', 'sqlite']) {
        const res = await ctl('print_sql_schema', type, '1', 'true');
        expect(res.code, res.stderr).to.equal(0);
        expect(res.stdout).to.match(/create table .users./);
        expect(res.stdout).to.match(/create table .fixture_notes./);
        expect(res.stdout).to.match(/insert into .schema_migrations./);
      }
      const bad = await ctl('print_sql_schema', 'oracle', '1', '1');
      expect(bad.code).to.equal(2);
      expect(bad.stderr).to.match(/unknown db_type 'oracle'/);
    });

    it('mnesia_info_ctl summarises the embedded database', async () => {
      const res = await ctl('mnesia_info_ctl');
      expect(res.code).to.equal(0);
      expect(res.stdout).to.match(/users +\d+/);
    });

    it('mnesia_change refuses to run while the server runs', async () => {
      const res = await ctl('mnesia_change', 'service@old');
      expect(res.code).to.equal(1);
      expect(res.stderr).to.match(/must run with the server stopped/);
    });
  });

  describe('logging', () => {
    const logFile = () => join(proc.dir, 'data', 'service.log');

    it('changes the log level at runtime: debug lines appear, secrets masked', async () => {
      expect((await ctl('get_loglevel')).stdout).to.equal('info\n');
      expect((await ctl('set_loglevel', 'debug')).code).to.equal(0);
      expect((await ctl('get_loglevel')).stdout).to.equal('debug\n');
      await ctl('register', 'carol', 'localhost', 'Top-Secret-Pw');
      await new Promise((r) => setTimeout(r, 300));
      const lines = (await readFile(logFile(), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
      const debug = lines.find((l) => l.level === 20 && l.command === 'register' && l.args?.user === 'carol');
      expect(debug, 'a debug line with the arguments').to.exist;
      expect(debug.args.password).to.equal('********');
      expect(await readFile(logFile(), 'utf8')).to.not.include('Top-Secret-Pw');
      const bad = await ctl('set_loglevel', 'verbose');
      expect(bad.code).to.equal(2);
      expect(bad.stderr).to.match(/unknown log level 'verbose': expected one of none, emergency/);
      await ctl('set_loglevel', 'info');
    });

    it('logs every call with frontend, command and outcome', async () => {
      await ctl('registered_vhosts');
      await new Promise((r) => setTimeout(r, 300));
      const lines = (await readFile(logFile(), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
      expect(lines.some((l) => l.command === 'registered_vhosts' && l.frontend === 'service_ctl' && l.outcome === 'ok')).to.equal(true);
    });

    it('rotate_log moves the file to .1 and starts a new one', async () => {
      await ctl('registered_vhosts');
      expect((await ctl('rotate_log')).code).to.equal(0);
      await ctl('fixture_echo', 'after-rotation', '1');
      await new Promise((r) => setTimeout(r, 300));
      const rotated = await readFile(`${logFile()}.1`, 'utf8');
      const current = await readFile(logFile(), 'utf8');
      expect(rotated).to.include('registered_vhosts');
      expect(current).to.include('log file rotated').and.include('fixture_echo');
      expect(current).to.not.include('registered_vhosts');
      expect((await ctl('rotate_log')).code).to.equal(0);
      const files = (await readdir(join(proc.dir, 'data'))).filter((f) => f.startsWith('service.log')).sort();
      expect(files).to.deep.equal(['service.log', 'service.log.1', 'service.log.2']);
    });

    it('reopen_log starts a new file after an external rotation', async () => {
      await rename(logFile(), `${logFile()}.moved`);
      expect((await ctl('reopen_log')).code).to.equal(0);
      await ctl('fixture_echo', 'after-reopen', '1');
      await new Promise((r) => setTimeout(r, 300));
      expect(await readFile(logFile(), 'utf8')).to.include('log file reopened').and.include('fixture_echo');
    });
  });

  describe('what a call loads', () => {
    // The kernel's index loads the whole server (half a second before the first byte reaches the socket).
    /** servicectl with `configFile`, and the modules it loaded. */
    const recorded = async (configFile: string, ...args: string[]) => {
      const log = join(proc.dir, `loaded-${Date.now()}.txt`);
      const res = await new Promise<{ code: number; stdout: string }>((resolve) => {
        execFile(process.execPath, ['--import', RECORD_MODULES, SERVICECTL, '--config', configFile, ...args], { env: { ...process.env, SERVICE_CONFIG: '', RECORD_MODULES_TO: log } }, (error, stdout) =>
          resolve({ code: error ? Number(error.code) : 0, stdout }),
        );
      });
      return { ...res, loaded: (await readLoaded(log)).map((module) => module.url) };
    };

    it('sends a command to the running server without loading the server', async () => {
      await ctl('register', 'loader', 'localhost', 'pw');
      const res = await recorded(proc.configFile, 'registered_users', 'localhost');
      expect(res.code).to.equal(0);
      expect(res.stdout).to.match(/^loader$/m);
      expect(res.loaded.some((url) => url.endsWith('/kernel/dist/cli.js'))).to.equal(true);
      expect(res.loaded.filter((url) => SERVER_CODE.test(url))).to.deep.equal([]);
    });

    it('loads the whole kernel where it needs it: help without a running server', async () => {
      const stopped = join(proc.dir, 'stopped.yml');
      await writeFile(stopped, (await readFile(proc.configFile, 'utf8')).replace(/^data_dir:.*$/m, `data_dir: ${join(proc.dir, 'elsewhere')}`));
      const res = await recorded(stopped, 'help', 'register');
      expect(res.code).to.equal(0);
      expect(res.loaded.some((url) => /\/kernel\/dist\/index\.js$/.test(url))).to.equal(true);
    });
  });

  describe('progress', () => {
    it('shows progress for a long command on a terminal', async () => {
      const res = await servicectlOnTty(proc.configFile, 'fixture_slow', '1800');
      expect(res.code).to.equal(0);
      expect(res.stdout).to.match(/\[#+-*\] \d+% \d+\/20 steps/);
    });

    it('shows nothing extra when piped', async () => {
      const res = await ctl('fixture_slow', '1200');
      expect(res).to.deep.include({ code: 0, stdout: '', stderr: '' });
    });
  });

  describe('a server that dies mid-command', () => {
    it('says so in one line, with exit 70, not a stack trace', async () => {
      const doomed = await spawnServer((port) => ({ ...openConfig(port), modules: { mod_http_api: {}, mod_fixture: {} } }), undefined, async (dir) => {
        await mkdir(join(dir, 'data', 'plugins'), { recursive: true });
        await cp(join(FIXTURE_PLUGINS, 'mod_fixture'), join(dir, 'data', 'plugins', 'mod_fixture'), { recursive: true });
      });
      try {
        const running = servicectl(doomed.configFile, 'fixture_slow', '8000');
        // Long enough for servicectl to start and connect on a busy machine; the command runs 8 s.
        await new Promise((r) => setTimeout(r, 3000));
        doomed.child.kill('SIGKILL');
        const res = await running;
        expect(res.code).to.equal(70);
        expect(res.stderr).to.equal("servicectl: the server closed the control connection: the command's outcome is unknown, see the server's log\n");
      } finally {
        await doomed.cleanup();
      }
    });
  });
});
