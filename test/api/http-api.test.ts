/**
 * The HTTP JSON API's contract: success shapes, every error status with its envelope, GET and POST,
 * Basic authentication, versions, CORS.
 */
import { expect } from 'chai';
import { request as httpRequest } from 'node:http';
import { baseConfig, request, TestServer } from '../support/server.js';

const ADMIN = 'admin@localhost:adminpass';

function expectError(res: { status: number; body: any; headers: Headers }, status: number, code: number, message: RegExp): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.headers.get('content-type')).to.match(/^application\/json/);
  expect(res.body).to.have.all.keys('status', 'code', 'message');
  expect(res.body.status).to.equal('error');
  expect(res.body.code).to.equal(code);
  expect(res.body.message).to.match(message);
}

describe('HTTP JSON API', () => {
  let t: TestServer;

  before(async () => {
    const config = baseConfig();
    (config.listen as any[])[0].max_body_size = 4096;
    config.modules = { mod_http_api: {}, mod_fixture: {} };
    // mod_fixture_dep is installed but not enabled: its commands must not exist.
    t = await TestServer.start(config, { plugins: ['mod_fixture', 'mod_fixture_dep'] });
    await t.bootstrapAdmin();
  });
  after(() => t.stop());

  describe('success', () => {
    it('answers status to a loopback caller without credentials, as a bare JSON string', async () => {
      const res = await t.api('status');
      expect(res.status).to.equal(200);
      expect(res.body).to.be.a('string').and.match(/^The node service@localhost is started with status: started\n/);
      expect(res.body).to.match(/is running in that node$/);
    });

    it('accepts an empty body as no arguments', async () => {
      const res = await t.api('status', {}, { raw: '' });
      expect(res.status).to.equal(200);
    });

    it('returns an ST command as the integer 0', async () => {
      const res = await t.api('gc', {}, { basic: ADMIN });
      expect(res.status).to.equal(200);
      expect(res.text).to.equal('0');
    });

    it('returns RS as a string and lists sorted', async () => {
      for (const user of ['carol', 'alice', 'bob']) {
        const res = await t.api('register', { user, host: 'localhost', password: 'pw' }, { basic: ADMIN });
        expect(res.status).to.equal(200);
        expect(res.body).to.equal(`User ${user}@localhost successfully registered`);
      }
      const res = await t.api('registered_users', { host: 'localhost' }, { basic: ADMIN });
      expect(res.body).to.deep.equal(['admin', 'alice', 'bob', 'carol']);
    });

    it('serves GET with query parameters for scalar arguments', async () => {
      const res = await t.api('registered_users', { host: 'localhost' }, { basic: ADMIN, method: 'GET' });
      expect(res.status).to.equal(200);
      expect(res.body).to.include('alice');
    });

    it('accepts an integer given as a numeric string', async () => {
      const res = await t.api('fixture_echo', { text: 'ab', times: '3' }, { basic: ADMIN });
      expect(res.status).to.equal(200);
      expect(res.body).to.equal('ababab');
      const get = await t.api('fixture_echo', { text: 'x', times: 2 }, { basic: ADMIN, method: 'GET' });
      expect(get.body).to.equal('xx');
    });

    it('takes lists, lists of objects (also as a JSON map) and booleans', async () => {
      const res = await t.api(
        'fixture_types',
        { names: ['a', 'b'], options: [{ name: 'x', value: '1' }], flag: true },
        { basic: ADMIN },
      );
      expect(res.body).to.deep.equal({ names: ['a', 'b'], pairs: 1, flag: true });
      const map = await t.api('fixture_types', { names: [], options: { members_only: 'true', public: 'false' }, flag: false }, { basic: ADMIN });
      expect(map.body).to.deep.equal({ names: [], pairs: 2, flag: false });
    });

    it('sets ejabberd\'s CORS headers and answers preflight', async () => {
      const res = await t.api('status');
      expect(res.headers.get('access-control-allow-origin')).to.equal('*');
      expect(res.headers.get('access-control-allow-headers')).to.equal('Content-Type, Authorization, X-Admin');
      const pre = await t.api('status', {}, { method: 'OPTIONS' });
      expect(pre.status).to.equal(200);
      expect(pre.headers.get('access-control-allow-methods')).to.equal('GET, POST, OPTIONS');
      expect(pre.headers.get('access-control-max-age')).to.equal('86400');
    });

    it('returns a request id header on every response', async () => {
      const a = await t.api('status');
      const b = await t.api('nope_nothing');
      expect(a.headers.get('x-request-id')).to.match(/^[0-9a-f]+-[0-9a-z]+$/);
      expect(b.headers.get('x-request-id')).to.not.equal(a.headers.get('x-request-id'));
    });
  });

  describe('versions', () => {
    it('uses the latest definition by default', async () => {
      const res = await t.api('fixture_version', { suffix: '!' }, { basic: ADMIN });
      expect(res.body).to.equal('v2!');
    });

    it('selects the newest definition at or below vN', async () => {
      expect((await t.api('fixture_version', {}, { basic: ADMIN, prefix: '/api/v0' })).body).to.equal('v0');
      expect((await t.api('fixture_version', {}, { basic: ADMIN, prefix: '/api/v1' })).body).to.equal('v0');
      expect((await t.api('fixture_version', { suffix: '?' }, { basic: ADMIN, prefix: '/api/v2' })).body).to.equal('v2?');
      expect((await t.api('fixture_version', { suffix: '?' }, { basic: ADMIN, prefix: '/api/v7' })).body).to.equal('v2?');
    });

    it('validates arguments against the selected version', async () => {
      const res = await t.api('fixture_version', { suffix: '!' }, { basic: ADMIN, prefix: '/api/v1' });
      expectError(res, 400, 41, /unknown argument 'suffix' for fixture_version: it takes no arguments/);
    });
  });

  describe('400 bad request', () => {
    it('refuses invalid JSON', async () => {
      expectError(await t.api('status', {}, { raw: '{"host": ' }), 400, 40, /invalid JSON/);
    });

    it('refuses what another site\'s page makes a browser send, unless it is a CORS request with its own Authorization', async () => {
      // node:http rather than fetch, which sets Sec-Fetch-Mode itself.
      const browser = (method: string, path: string, headers: Record<string, string>, body?: string) =>
        new Promise<{ status: number; body: any; headers: Headers }>((resolve, reject) => {
          const req = httpRequest(t.url(path), { method, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
            let text = '';
            res.on('data', (chunk) => (text += chunk));
            res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text), headers: new Headers(res.headers as Record<string, string>) }));
          });
          req.on('error', reject);
          req.end(body);
        });
      const from = (site: string, mode: string) => ({ 'sec-fetch-site': site, 'sec-fetch-mode': mode });
      const basic = { authorization: `Basic ${Buffer.from(ADMIN).toString('base64')}` };
      // An image or a form from another site: loopback, or the browser's cached credentials, would have let it through.
      expectError(await browser('GET', '/api/status', from('cross-site', 'no-cors')), 403, 32, /another site \(cross-site\) must be a CORS request/);
      const form = await browser('POST', '/api/register', { ...from('same-site', 'navigate'), ...basic }, '{"user":"forged","host":"localhost","password":"pw"}');
      expectError(form, 403, 32, /another site \(same-site\) must be a CORS request/);
      expectError(await browser('POST', '/api/status', from('cross-site', 'cors'), '{}'), 403, 32, /must carry an Authorization header/);
      expect((await t.api('registered_users', { host: 'localhost' }, { basic: ADMIN })).body).to.not.include('forged');
      // A page that set Authorization itself (after a preflight), a page of this origin, and a typed address.
      expect((await browser('POST', '/api/status', { ...from('cross-site', 'cors'), ...basic }, '{}')).status).to.equal(200);
      expect((await browser('GET', '/api/status', from('same-origin', 'no-cors'))).status).to.equal(200);
      expect((await browser('GET', '/api/status', from('none', 'navigate'))).status).to.equal(200);
    });

    it('refuses arguments in the query string of a POST, naming them', async () => {
      const res = await request(t.url('/api/check_account?user=alice&host=localhost'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expectError(res, 400, 40, /^a POST takes its arguments in the JSON body, not in the query string \(user, host\)$/);
    });

    it('refuses a body that is not UTF-8, registering nothing', async () => {
      const raw = Buffer.concat([Buffer.from('{"user":"bad'), Buffer.from([0xe9, 0xff]), Buffer.from('","host":"localhost","password":"pw"}')]);
      expectError(await t.api('register', {}, { basic: ADMIN, raw }), 400, 40, /^the request body is not valid UTF-8$/);
      const users: string[] = (await t.api('registered_users', { host: 'localhost' }, { basic: ADMIN })).body;
      expect(users.filter((u) => u.startsWith('bad'))).to.deep.equal([]);
    });

    it('reads a body that arrives with the headers and one that trickles in after them, split inside a character, without its byte order mark', async () => {
      const body = (user: string) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`{"user":"${user}","host":"localhost","password":"pw"}`)]);
      // All at once: the server finds the whole body buffered when mod_http_api asks for it.
      expect((await t.api('register', {}, { basic: ADMIN, raw: body('zoë') })).status).to.equal(200);
      // Headers first, then the body in two parts cut inside the "é" (0xc3 0xa9), 50 ms apart.
      const slow = body('zoé');
      const cut = slow.indexOf(0xc3) + 1;
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(t.url('/api/register'), {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': slow.length, authorization: `Basic ${Buffer.from(ADMIN).toString('base64')}` },
        });
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode!);
        });
        req.on('error', reject);
        req.flushHeaders();
        setTimeout(() => req.write(slow.subarray(0, cut)), 50);
        setTimeout(() => req.end(slow.subarray(cut)), 100);
      });
      expect(status).to.equal(200);
      const users: string[] = (await t.api('registered_users', { host: 'localhost' }, { basic: ADMIN })).body;
      expect(users).to.include.members(['zoë', 'zoé']);
    });

    it('refuses a body that is not a JSON object', async () => {
      expectError(await t.api('status', {}, { raw: '["localhost"]' }), 400, 40, /must be a JSON object.*got a list/);
      expectError(await t.api('status', {}, { raw: '"x"' }), 400, 40, /must be a JSON object.*got a string/);
      expectError(await t.api('status', {}, { raw: 'null' }), 400, 40, /must be a JSON object.*got null/);
    });

    it('refuses a missing argument, naming it and its type', async () => {
      expectError(await t.api('registered_users', {}, { basic: ADMIN }), 400, 41, /missing argument 'host' for registered_users: expected string/);
    });

    it('refuses an unknown extra argument, with a did-you-mean', async () => {
      const res = await t.api('registered_users', { host: 'localhost', hots: 'x' }, { basic: ADMIN });
      expectError(res, 400, 41, /unknown argument 'hots' for registered_users \(did you mean 'host'\?\)/);
    });

    it('refuses a duplicate argument in JSON and in the query string', async () => {
      const json = await t.api('registered_users', {}, { basic: ADMIN, raw: '{"host":"localhost","host":"example.com"}' });
      expectError(json, 400, 41, /duplicate argument 'host'/);
      const res = await request(t.url('/api/registered_users?host=localhost&host=example.com'), {
        method: 'GET',
        headers: { authorization: `Basic ${Buffer.from(ADMIN).toString('base64')}` },
      });
      expectError(res, 400, 41, /duplicate argument 'host'/);
    });

    it('refuses wrong types, naming the argument and what was expected', async () => {
      expectError(await t.api('fixture_echo', { text: 'a', times: 'three' }, { basic: ADMIN }), 400, 41, /argument 'times' must be an integer, got "three"/);
      expectError(await t.api('fixture_echo', { text: 'a', times: 1.5 }, { basic: ADMIN }), 400, 41, /argument 'times' must be an integer, got 1.5/);
      expectError(await t.api('fixture_echo', { text: 42, times: 1 }, { basic: ADMIN }), 400, 41, /argument 'text' must be a string, got 42/);
      expectError(await t.api('registered_users', { host: null }, { basic: ADMIN }), 400, 41, /argument 'host' must be a string, got null/);
      expectError(
        await t.api('fixture_types', { names: 'a', options: [], flag: true }, { basic: ADMIN }),
        400,
        41,
        /argument 'names' must be a list of string/,
      );
      expectError(
        await t.api('fixture_types', { names: [1], options: [], flag: true }, { basic: ADMIN }),
        400,
        41,
        /argument 'names\[0\]' must be a string, got 1/,
      );
      expectError(
        await t.api('fixture_types', { names: [], options: [{ name: 'x' }], flag: true }, { basic: ADMIN }),
        400,
        41,
        /argument 'options\[0\]' is missing the field 'value'/,
      );
    });

    it('refuses GET for a command with list arguments, pointing to POST', async () => {
      expectError(await t.api('fixture_types', { flag: true }, { basic: ADMIN, method: 'GET' }), 400, 40, /call it with POST/);
    });

    it('refuses invalid account data with the argument named', async () => {
      expectError(await t.api('register', { user: 'a b', host: 'localhost', password: 'pw' }, { basic: ADMIN }), 400, 41, /user/);
      // Prohibited by stringprep (RFC 3454 table C.6), and the bidi rule of its section 6.
      expectError(
        await t.api('register', { user: 'rep\ufffd', host: 'localhost', password: 'pw' }, { basic: ADMIN }),
        400,
        41,
        /user name contains a character inappropriate for plain text \(U\+FFFD\), which is not allowed/,
      );
      expectError(
        await t.api('register', { user: 'mixed\u05d0a', host: 'localhost', password: 'pw' }, { basic: ADMIN }),
        400,
        41,
        /user name mixes right-to-left and left-to-right characters \('\u05d0' and 'm'\), which is not allowed/,
      );
      const rtl = await t.api('register', { user: '\u05d0\u05d1', host: 'localhost', password: 'pw' }, { basic: ADMIN });
      expect(rtl.status, JSON.stringify(rtl.body)).to.equal(200);
      expect(rtl.body).to.equal('User \u05d0\u05d1@localhost successfully registered');
      expect((await t.api('unregister', { user: '\u05d0\u05d1', host: 'localhost' }, { basic: ADMIN })).status).to.equal(200);
      expectError(await t.api('register', { user: 'dora', host: 'nowhere.test', password: 'pw' }, { basic: ADMIN }), 400, 41, /unknown virtual host 'nowhere.test'/);
      expectError(await t.api('register', { user: 'dora', host: 'localhost', password: '' }, { basic: ADMIN }), 400, 41, /password/);
      expect((await t.api('registered_users', { host: 'localhost' }, { basic: ADMIN })).body).to.not.include('dora');
    });

    it('refuses a missing command name', async () => {
      const res = await request(t.url('/api'), { method: 'POST', body: '{}' });
      expectError(res, 400, 40, /missing command name/);
    });
  });

  describe('401 unauthorized', () => {
    it('refuses a wrong password, with WWW-Authenticate', async () => {
      const res = await t.api('status', {}, { basic: 'admin@localhost:wrong' });
      expectError(res, 401, 10, /invalid credentials/);
      expect(res.headers.get('www-authenticate')).to.match(/^Basic realm=/);
    });

    it('refuses an unknown account, an unknown host and a malformed header alike', async () => {
      expectError(await t.api('status', {}, { basic: 'nobody@localhost:pw' }), 401, 10, /invalid credentials/);
      expectError(await t.api('status', {}, { basic: 'admin@nowhere.test:adminpass' }), 401, 10, /invalid credentials/);
      expectError(await t.api('status', {}, { authorization: 'Basic !!!' }), 401, 10, /invalid credentials/);
      expectError(await t.api('status', {}, { authorization: 'Digest abc' }), 401, 10, /unsupported authorization scheme 'digest'/);
    });

    it('refuses an unknown bearer token with invalid_token', async () => {
      const res = await t.api('status', {}, { authorization: 'Bearer abc' });
      expectError(res, 401, 10, /Oauth Token is invalid or expired/);
      expect(res.headers.get('www-authenticate')).to.equal('Bearer error="invalid_token"');
    });
  });

  describe('403 forbidden', () => {
    it('denies a command no group grants, and logs which groups were consulted', async () => {
      const res = await t.api('registered_users', { host: 'localhost' });
      expectError(res, 403, 32, /not allowed: no api_permissions group lets an anonymous caller from 127\.0\.0\.1 run registered_users through mod_http_api/);
      const requestId = res.headers.get('x-request-id');
      const line = t.logged((l) => l.requestId === requestId && Array.isArray(l.groups))[0];
      expect(line, 'denial log line').to.exist;
      expect(line!.msg).to.match(/denied registered_users/);
      expect(line!.groups).to.deep.equal([
        "'console commands': from does not include mod_http_api",
        "'public commands': what does not include registered_users",
        "'admin access': who did not match an anonymous caller from 127.0.0.1 (tried acl: admin)",
      ]);
    });

    it('denies an authenticated non-admin, and changes nothing', async () => {
      const res = await t.api('register', { user: 'eve', host: 'localhost', password: 'pw' }, { basic: 'alice@localhost:pw' });
      expectError(res, 403, 32, /alice@localhost/);
      expect((await t.api('registered_users', { host: 'localhost' }, { basic: ADMIN })).body).to.not.include('eve');
    });
  });

  describe('404 unknown command', () => {
    it('names an unknown command', async () => {
      expectError(await t.api('no_such_command'), 404, 44, /unknown command no_such_command/);
    });

    it('says when the command belongs to a module that is not enabled', async () => {
      const res = await t.api('fixture_dep_greet', {}, { basic: ADMIN });
      expectError(res, 404, 44, /unknown command fixture_dep_greet: it is provided by module mod_fixture_dep, which is not enabled/);
    });

    it('answers 404 for a path nothing serves', async () => {
      expectError(await request(t.url('/nothing/here'), { method: 'GET' }), 404, 45, /nothing is served at \/nothing\/here/);
    });
  });

  describe('405, 409, 413, 500', () => {
    it('refuses other methods with 405 and Allow', async () => {
      const res = await t.api('status', {}, { method: 'PUT' });
      expectError(res, 405, 46, /method PUT is not supported/);
      expect(res.headers.get('allow')).to.equal('GET, POST, OPTIONS');
    });

    it('answers 409 to registering an existing account, and keeps its password', async () => {
      const res = await t.api('register', { user: 'alice', host: 'localhost', password: 'other' }, { basic: ADMIN });
      expectError(res, 409, 49, /alice@localhost already exists/);
      expect((await t.api('status', {}, { basic: 'alice@localhost:pw' })).status).to.equal(200);
    });

    it('answers 413 to a body over max_body_size', async () => {
      const res = await t.api('fixture_echo', { text: 'x'.repeat(5000), times: 1 }, { basic: ADMIN });
      expectError(res, 413, 13, /exceeds 4096 bytes/);
    });

    it('answers 500 only for a genuine fault, logged with the request id, without leaking details', async () => {
      const res = await t.api('fixture_fail', {}, { basic: ADMIN });
      const requestId = res.headers.get('x-request-id')!;
      expectError(res, 500, 50, new RegExp(`internal error while running fixture_fail \\(request id ${requestId}\\)`));
      expect(res.body.message).to.not.include('hunter2');
      const line = t.logged((l) => l.requestId === requestId && l.level === 50)[0];
      expect(line?.err?.message).to.include('fixture failure');
    });

    it('treats a result that breaks its declaration as an internal fault', async () => {
      expectError(await t.api('fixture_bad_result', {}, { basic: ADMIN }), 500, 50, /internal|fixture_bad_result/);
    });
  });

  describe('logging', () => {
    it('logs every call with frontend, caller, command and outcome, and never a password', async () => {
      const res = await t.api('register', { user: 'frank', host: 'localhost', password: 'SuperSecret123' }, { basic: ADMIN });
      expect(res.status).to.equal(200);
      const line = t.logged((l) => l.requestId === res.headers.get('x-request-id') && l.command === 'register')[0];
      expect(line).to.include({ frontend: 'mod_http_api', caller: 'admin@localhost', outcome: 'ok', ip: '127.0.0.1' });
      expect(JSON.stringify(t.logs)).to.not.include('SuperSecret123').and.not.include('adminpass');
    });
  });
});
