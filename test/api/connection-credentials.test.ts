/**
 * Credentials trusted again on their connection. A password or token that succeeded on a kept-alive
 * connection is not checked again for the next requests on it with the same credentials, until the credential
 * or token cache would stop trusting it: these tests hold one connection open (an Agent with one socket, every
 * later request on the reused socket) and change what the credentials stand for in between, over other
 * connections. A changed password, a ban, a revocation, an expiry and the failed-login limit must each bite on
 * the very next request of that connection, on /api and on XML-RPC.
 */
import { expect } from 'chai';
import { Agent, request as httpRequest } from 'node:http';
import { TestServer } from '../support/server.js';
import { oauthConfig } from '../support/oauth-config.js';

const ADMIN = 'admin@localhost:adminpass';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Answer {
  status: number;
  text: string;
  /** The request went on the socket of an earlier one. */
  reused: boolean;
}

/** One kept-alive connection: every request goes on the same socket once the first has opened it. */
class Connection {
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 1 });
  constructor(private readonly port: number) {}

  post(path: string, body: string, headers: Record<string, string>): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port: this.port, path, method: 'POST', agent: this.#agent, headers: { 'content-length': Buffer.byteLength(body), ...headers } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode!, text, reused: req.reusedSocket }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  api(command: string, args: Record<string, unknown>, authorization: string): Promise<Answer> {
    return this.post(`/api/${command}`, JSON.stringify(args), { 'content-type': 'application/json', authorization });
  }

  close(): void {
    this.#agent.destroy();
  }
}

const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString('base64')}`;

/** An XML-RPC call of `method` with credentials given as parts (the own-data form), no arguments. */
const xmlrpcBody = (method: string, credentials: Record<string, string>) =>
  `<?xml version="1.0"?><methodCall><methodName>${method}</methodName><params><param><value><struct>` +
  Object.entries(credentials)
    .map(([name, value]) => `<member><name>${name}</name><value><string>${value}</string></value></member>`)
    .join('') +
  '</struct></value></param></params></methodCall>';

describe('HTTP API: credentials trusted again on their connection', function () {
  this.timeout(60_000);
  let t: TestServer;
  const connections: Connection[] = [];
  const connection = () => {
    const made = new Connection(t.port);
    connections.push(made);
    return made;
  };
  const admin = async (command: string, args: Record<string, unknown>) => {
    const res = await t.api(command, args, { basic: ADMIN });
    expect(res.status, `${command}: ${res.text}`).to.equal(200);
    return res.body;
  };

  before(async () => {
    const config = oauthConfig();
    config.login_failures_per_account = 3;
    (config.listen as any[]).push({ port: 0, ip: '127.0.0.1', module: 'service_xmlrpc' });
    config.modules = { mod_http_api: {}, mod_admin_extra: {}, mod_private: {} };
    t = await TestServer.start(config);
    await t.bootstrapAdmin();
    for (const user of ['carol', 'dave', 'erin', 'frank', 'gina']) await t.register(user, 'localhost', 'pw1');
  });
  afterEach(() => {
    for (const made of connections.splice(0)) made.close();
  });
  after(() => t?.stop());

  it('answers a password again on its connection, and not after the password changed elsewhere', async () => {
    const c = connection();
    const first = await c.api('status', {}, basic('carol@localhost:pw1'));
    expect(first.status, first.text).to.equal(200);
    const again = await c.api('status', {}, basic('carol@localhost:pw1'));
    expect([again.status, again.reused]).to.deep.equal([200, true]);
    await admin('change_password', { user: 'carol', host: 'localhost', newpass: 'pw2' });
    const old = await c.api('status', {}, basic('carol@localhost:pw1'));
    expect([old.status, old.reused]).to.deep.equal([401, true]);
    const changed = await c.api('status', {}, basic('carol@localhost:pw2'));
    expect([changed.status, changed.reused]).to.deep.equal([200, true]);
  });

  it('checks other credentials sent on the same connection (a wrong password after a right one)', async () => {
    const c = connection();
    expect((await c.api('status', {}, basic('dave@localhost:pw1'))).status).to.equal(200);
    const wrong = await c.api('status', {}, basic('dave@localhost:wrong'));
    expect([wrong.status, wrong.reused]).to.deep.equal([401, true]);
    const otherAccount = await c.api('registered_users', { host: 'localhost' }, basic(ADMIN));
    expect([otherAccount.status, otherAccount.reused], otherAccount.text).to.deep.equal([200, true]);
    const wrongAdmin = await c.api('registered_users', { host: 'localhost' }, basic('admin@localhost:adminpasz'));
    expect([wrongAdmin.status, wrongAdmin.reused]).to.deep.equal([401, true]);
  });

  it('refuses an account banned while its connection stays open, and answers it again once unbanned', async () => {
    const c = connection();
    expect((await c.api('status', {}, basic('erin@localhost:pw1'))).status).to.equal(200);
    await admin('ban_account', { user: 'erin', host: 'localhost', reason: 'test' });
    const banned = await c.api('status', {}, basic('erin@localhost:pw1'));
    expect([banned.status, banned.reused]).to.deep.equal([401, true]);
    await admin('unban_account', { user: 'erin', host: 'localhost' });
    const unbanned = await c.api('status', {}, basic('erin@localhost:pw1'));
    expect([unbanned.status, unbanned.reused], unbanned.text).to.deep.equal([200, true]);
  });

  it('applies the failed-login limit to a connection whose password was already accepted', async () => {
    const c = connection();
    expect((await c.api('status', {}, basic('frank@localhost:pw1'))).status).to.equal(200);
    for (let i = 0; i < 3; i++) {
      expect((await t.api('status', {}, { basic: 'frank@localhost:guess' })).status).to.equal(401);
    }
    const limited = await c.api('status', {}, basic('frank@localhost:pw1'));
    expect([limited.status, limited.reused], limited.text).to.deep.equal([429, true]);
  });

  it('refuses a bearer token revoked while its connection stays open', async () => {
    const { token } = await admin('oauth_issue_token', { jid: 'admin@localhost', ttl: 600, scopes: ['service:admin'] });
    const c = connection();
    const first = await c.api('registered_users', { host: 'localhost' }, `Bearer ${token}`);
    expect(first.status, first.text).to.equal(200);
    expect((await c.api('registered_users', { host: 'localhost' }, `Bearer ${token}`)).reused).to.equal(true);
    await admin('oauth_revoke_token', { token });
    const revoked = await c.api('registered_users', { host: 'localhost' }, `Bearer ${token}`);
    expect([revoked.status, revoked.reused]).to.deep.equal([401, true]);
  });

  it('refuses a bearer token that expired while its connection stayed open', async () => {
    const { token } = await admin('oauth_issue_token', { jid: 'admin@localhost', ttl: 1, scopes: ['service:admin'] });
    const c = connection();
    const first = await c.api('registered_users', { host: 'localhost' }, `Bearer ${token}`);
    expect(first.status, first.text).to.equal(200);
    await sleep(1100);
    const expired = await c.api('registered_users', { host: 'localhost' }, `Bearer ${token}`);
    expect([expired.status, expired.reused]).to.deep.equal([401, true]);
  });

  it('on XML-RPC, refuses credential parts after the password changed, and a token after its revocation', async () => {
    const path = `http://127.0.0.1:${t.server.portOf('service_xmlrpc')}/`;
    const port = Number(new URL(path).port);
    const c = new Connection(port);
    connections.push(c);
    const call = (credentials: Record<string, string>) => c.post('/', xmlrpcBody('user_resources', credentials), { 'content-type': 'text/xml' });
    const faultCode = (answer: Answer) => /<name>faultCode<\/name><value><int>(\d+)<\/int>/.exec(answer.text)?.[1];

    const { token } = await admin('oauth_issue_token', { jid: 'gina@localhost', ttl: 600, scopes: ['service:user'] });
    const first = await call({ user: 'gina', server: 'localhost', token });
    expect([first.status, faultCode(first)], first.text).to.deep.equal([200, undefined]);
    await admin('oauth_revoke_token', { token });
    const revoked = await call({ user: 'gina', server: 'localhost', token });
    expect([faultCode(revoked), revoked.reused], revoked.text).to.deep.equal(['10', true]);

    // With a password, gina may run nothing (api_permissions give passwords no user commands): refused by
    // permission (32) while the password is right, by authentication (10) once it is not.
    const right = await call({ user: 'gina', server: 'localhost', password: 'pw1' });
    expect(faultCode(right), right.text).to.equal('32');
    await admin('change_password', { user: 'gina', host: 'localhost', newpass: 'pw2' });
    const old = await call({ user: 'gina', server: 'localhost', password: 'pw1' });
    expect([faultCode(old), old.reused], old.text).to.deep.equal(['10', true]);
  });
});
