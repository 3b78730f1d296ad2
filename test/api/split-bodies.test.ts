/**
 * Request bodies with a Content-Length that arrive in pieces. The body reader takes a body at once when all of
 * its declared length is buffered, and otherwise waits for the rest: a JSON body split across writes, sent a
 * byte at a time, or whose last byte comes late must be read whole (never cut at what had arrived), and a body
 * the client never finishes must not be run.
 */
import { expect } from 'chai';
import { connect } from 'node:net';
import { TestServer } from '../support/server.js';

const ADMIN = 'admin@localhost:adminpass';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Writes `head` and `body` in `pieces`, `gapMs` apart; resolves with the raw answer (or what came in `waitMs`). */
async function send(port: number, head: string, pieces: string[], gapMs: number, waitMs = 5000): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let raw = '';
  socket.on('data', (data) => (raw += data.toString('utf8')));
  socket.on('error', () => {});
  socket.write(head);
  for (const piece of pieces) {
    await sleep(gapMs);
    socket.write(piece);
  }
  for (const started = Date.now(); !/\r\n\r\n[\s\S]*[}\]"]$/.test(raw) && Date.now() - started < waitMs; ) await sleep(5);
  socket.destroy();
  return raw;
}

describe('HTTP API: Content-Length bodies that arrive in pieces', function () {
  this.timeout(60_000);
  let t: TestServer;

  before(async () => {
    t = await TestServer.start({
      hosts: ['localhost'],
      listen: [{ port: 0, ip: '127.0.0.1', module: 'service_http', request_handlers: { '/api': 'mod_http_api' } }],
      acl: { admin: { user: 'admin@localhost' } },
      api_permissions: { 'admin access': { who: { acl: 'admin' }, what: '*' } },
      modules: { mod_http_api: {} },
    });
    await t.bootstrapAdmin();
  });
  after(() => t?.stop());

  const head = (command: string, body: string) =>
    `POST /api/${command} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
    `Authorization: Basic ${Buffer.from(ADMIN).toString('base64')}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
  const registered = async () => {
    const res = await t.api('registered_users', { host: 'localhost' }, { basic: ADMIN });
    expect(res.status, res.text).to.equal(200);
    return res.body as string[];
  };

  it('a body sent whole with its headers registers the account (the control)', async () => {
    const body = JSON.stringify({ user: 'whole', host: 'localhost', password: 'pw-whole' });
    const raw = await send(t.port, head('register', body) + body, [], 0);
    expect(raw, raw).to.match(/^HTTP\/1\.1 200/);
    expect(await registered()).to.include('whole');
  });

  it('a body in two writes 100 ms apart is read whole', async () => {
    const body = JSON.stringify({ user: 'halves', host: 'localhost', password: 'pw-halves' });
    const cut = Math.floor(body.length / 2);
    const raw = await send(t.port, head('register', body) + body.slice(0, cut), [body.slice(cut)], 100);
    expect(raw, raw).to.match(/^HTTP\/1\.1 200/);
    expect(await registered()).to.include('halves');
  });

  it('a body sent a byte at a time after its headers is read whole', async () => {
    const body = JSON.stringify({ user: 'bytes', host: 'localhost', password: 'pw-bytes' });
    const raw = await send(t.port, head('register', body), [...body], 2);
    expect(raw, raw).to.match(/^HTTP\/1\.1 200/);
    expect(await registered()).to.include('bytes');
  });

  it('a body whose last byte never comes is not run, and the same bytes completed are', async () => {
    const body = JSON.stringify({ user: 'unfinished', host: 'localhost', password: 'pw-unfinished' });
    const raw = await send(t.port, head('register', body) + body.slice(0, -1), [], 0, 500);
    expect(raw, 'nothing is answered while the body is incomplete').to.equal('');
    expect(await registered()).not.to.include('unfinished');
    const completed = await send(t.port, head('register', body) + body.slice(0, -1), [body.slice(-1)], 300);
    expect(completed, completed).to.match(/^HTTP\/1\.1 200/);
    expect(await registered()).to.include('unfinished');
  });
});
