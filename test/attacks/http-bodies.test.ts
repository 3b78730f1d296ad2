/**
 * Request bodies that announce no size: `Transfer-Encoding: chunked` without Content-Length, streamed past
 * the listener's max_body_size to /api, to XML-RPC and to /oauth/token. The size check cannot happen before
 * reading, so this proves it happens while reading: a 413 naming the limit arrives soon after the limit (not
 * after the whole body), the connection is then closed (the rest of the body is never parsed, and a request
 * pipelined behind it is not served), and nothing the body asked for happened. Each case first sends the same
 * request chunked and small, which must work, so a refusal cannot come from chunked encoding itself. Framing
 * tricks around chunked bodies (a Content-Length as well, a malformed chunk size) are answered 400.
 */
import { expect } from 'chai';
import { connect, type Socket } from 'node:net';
import { basicAuth } from '../support/oauth-client.js';
import { TestServer } from '../support/server.js';
import { encodeXmlRpc, xmlrpcCall } from '../support/xmlrpc.js';

const LIMIT = 32 * 1024;
const ADMIN = 'admin@localhost:adminpass';
const CLIENT_SECRET = 's3cret';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Body bytes we had written when the response's status line arrived. */
  writtenAtResponse: number;
  /** The server closed the connection (within 5 s of the response). */
  closed: boolean;
  /** Everything the server sent. */
  raw: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `done()` or `ms` passed. */
async function until(done: () => boolean, ms: number): Promise<void> {
  for (const started = Date.now(); !done() && Date.now() - started < ms; ) await sleep(5);
}

/** Status, headers and (de-chunked) body of the first response in `raw`. */
function parseResponse(raw: string): Pick<RawResponse, 'status' | 'headers' | 'body'> {
  const end = raw.indexOf('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of raw.slice(0, end).split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = raw.slice(end + 4);
  if (headers['transfer-encoding'] === 'chunked') {
    let out = '';
    for (let at = 0; ; ) {
      const eol = body.indexOf('\r\n', at);
      const size = parseInt(body.slice(at, eol), 16);
      if (!size) break;
      out += body.slice(eol + 2, eol + 2 + size);
      at = eol + 2 + size + 2;
    }
    body = out;
  } else if (headers['content-length']) {
    body = Buffer.from(body).subarray(0, Number(headers['content-length'])).toString();
  }
  return { status, headers, body };
}

/**
 * Sends `head` (request line and headers, without the blank line), then a chunked body: `prefix`, then
 * `filler` in chunks of `chunkSize` up to `total` bytes (one chunk a millisecond, stopping as soon as the
 * server answers), then, if the server has not answered, `suffix` and the last chunk; then `after` (a request
 * pipelined behind this one). Waits for the answer, then up to 5 s for the server to close the connection.
 */
async function sendChunked(port: number, head: string, body: { prefix: string; filler?: string; total?: number; suffix: string; after?: string }, chunkSize = 4096): Promise<RawResponse> {
  const socket: Socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let raw = '';
  let written = 0;
  let writtenAtResponse = -1;
  let closed = false;
  socket.on('data', (data) => {
    raw += data.toString('utf8');
    if (writtenAtResponse === -1) writtenAtResponse = written;
  });
  socket.on('error', () => {});
  socket.on('close', () => (closed = true));
  const write = (data: string) => {
    if (!socket.destroyed && socket.writable) socket.write(data);
  };
  const chunk = (data: string) => {
    written += Buffer.byteLength(data);
    write(`${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n`);
  };
  write(`${head}\r\nTransfer-Encoding: chunked\r\n\r\n`);
  chunk(body.prefix);
  if (body.filler) {
    const piece = body.filler.repeat(Math.ceil(chunkSize / body.filler.length)).slice(0, chunkSize);
    for (let sent = 0; sent < (body.total ?? 0) && writtenAtResponse === -1 && !closed; sent += chunkSize) {
      chunk(piece);
      await sleep(1);
    }
  }
  if (writtenAtResponse === -1 && !closed) {
    if (body.suffix) chunk(body.suffix);
    write('0\r\n\r\n');
  }
  if (body.after) write(body.after);
  await until(() => writtenAtResponse !== -1 || closed, 10_000);
  await until(() => closed, 5000);
  socket.destroy();
  return { ...parseResponse(raw), writtenAtResponse, closed, raw };
}

describe('attacks: chunked request bodies over max_body_size', function () {
  this.timeout(60_000);
  let t: TestServer;
  let httpPort: number;
  let xmlrpcPort: number;

  const exists = async (user: string) => {
    const res = await t.api('registered_users', { host: 'localhost' }, { basic: ADMIN });
    expect(res.status, res.text).to.equal(200);
    return (res.body as string[]).includes(user);
  };

  const tokensOf = async (user: string) => {
    const res = await t.api('oauth_list_tokens', {}, { basic: ADMIN });
    expect(res.status, res.text).to.equal(200);
    return (res.body as Array<{ user?: string; jid?: string }>).filter((token) => JSON.stringify(token).includes(`${user}@localhost`));
  };

  /** The common expectations on an over-limit answer: 413, soon after the limit, and the connection closed. */
  function expectRefusedEarly(res: RawResponse): void {
    expect(res.status, res.raw.slice(0, 300)).to.equal(413);
    expect(res.writtenAtResponse, 'body bytes sent before the 413').to.be.within(LIMIT - 4096, LIMIT + 256 * 1024);
    expect(res.closed, 'the server closes the connection after the 413').to.equal(true);
    expect(res.headers.connection).to.equal('close');
  }

  before(async () => {
    const config = {
      hosts: ['localhost'],
      listen: [
        { port: 0, ip: '127.0.0.1', module: 'service_http', max_body_size: LIMIT, request_handlers: { '/api': 'mod_http_api', '/oauth': 'service_oauth' } },
        { port: 0, ip: '127.0.0.1', module: 'service_xmlrpc', max_body_size: LIMIT },
      ],
      acl: { admin: { user: 'admin@localhost' }, loopback: { ip: ['127.0.0.0/8', '::1/128'] } },
      api_permissions: { 'admin access': { who: { acl: 'admin' }, what: '*' } },
      oauth_access: 'all',
      oauth_expire: 3600,
      modules: { mod_http_api: {} },
    };
    t = await TestServer.start(config);
    httpPort = t.port;
    xmlrpcPort = t.server.portOf('service_xmlrpc')!;
    await t.bootstrapAdmin();
    await t.server.services.accounts.register('ann', 'localhost', 'ann-pw');
    expect((await t.api('oauth_add_client_password', { client_id: 'backend', client_name: 'Backend', secret: CLIENT_SECRET }, { basic: ADMIN })).status).to.equal(200);
  });
  after(() => t?.stop());

  const adminAuth = `Authorization: Basic ${Buffer.from(ADMIN).toString('base64')}`;
  const apiHead = (command: string) => `POST /api/${command} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${adminAuth}`;
  /** A request of a positive control asks for the connection to be closed after it, so nothing waits for keep-alive. */
  const closing = (head: string) => `${head}\r\nConnection: close`;

  describe('/api', () => {
    it('a small chunked register works (chunked bodies are read)', async () => {
      const res = await sendChunked(httpPort, closing(apiHead('register')), { prefix: '{"user":"chunk1","host":', suffix: '"localhost","password":"pw"}' });
      expect(res.status, res.raw).to.equal(200);
      expect(await exists('chunk1')).to.equal(true);
    });

    it('a chunked register past max_body_size is a 413 naming the limit, the connection is closed, and nobody is registered', async () => {
      const smuggled = `POST /api/register HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${adminAuth}\r\nContent-Length: 54\r\n\r\n{"user":"smuggled","host":"localhost","password":"pw"}`;
      const res = await sendChunked(httpPort, apiHead('register'), {
        prefix: '{"user":"chunk2","host":"localhost","password":"pw","pad":"',
        filler: 'x',
        total: 4 * 1024 * 1024,
        suffix: '"}',
        after: smuggled,
      });
      expectRefusedEarly(res);
      const error = JSON.parse(res.body);
      expect(error).to.include({ status: 'error', code: 13 });
      expect(error.message).to.contain(`${LIMIT} bytes`).and.to.contain('max_body_size');
      expect(res.raw.match(/HTTP\/1\.1 /g), 'one answer on the connection').to.have.length(1);
      expect(await exists('chunk2')).to.equal(false);
      expect(await exists('smuggled')).to.equal(false);
    });

    it('a single chunk declared larger than the limit is refused as its bytes arrive', async () => {
      const res = await new Promise<{ text: string; closed: boolean }>((resolve) => {
        const socket = connect(httpPort, '127.0.0.1');
        let text = '';
        socket.on('data', (d) => (text += d));
        socket.on('error', () => {});
        socket.on('close', () => resolve({ text, closed: true }));
        socket.once('connect', async () => {
          socket.write(`${apiHead('register')}\r\nTransfer-Encoding: chunked\r\n\r\n${(16 * 1024 * 1024).toString(16)}\r\n`);
          for (let i = 0; i < 256 && !text && !socket.destroyed; i++) {
            socket.write('x'.repeat(4096));
            await new Promise((r) => setTimeout(r, 1));
          }
        });
      });
      expect(res.text).to.match(/^HTTP\/1\.1 413 /);
      expect(res.closed).to.equal(true);
    });

    it('chunked with a Content-Length as well, or a malformed chunk size, is a 400 and registers nobody', async () => {
      for (const [name, request] of [
        ['cl+te', `${apiHead('register')}\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n36\r\n{"user":"framing1","host":"localhost","password":"pw"}\r\n0\r\n\r\n`],
        ['bad size', `${apiHead('register')}\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{"user":"framing2","host":"localhost","password":"pw"}\r\n0\r\n\r\n`],
        ['te twice', `${apiHead('register')}\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n36\r\n{"user":"framing3","host":"localhost","password":"pw"}\r\n0\r\n\r\n`],
      ] as const) {
        const text = await new Promise<string>((resolve) => {
          const socket = connect(httpPort, '127.0.0.1');
          let out = '';
          socket.on('data', (d) => (out += d));
          socket.on('error', () => {});
          socket.on('close', () => resolve(out));
          socket.once('connect', () => socket.write(request));
          setTimeout(() => socket.destroy(), 5000);
        });
        expect(text, name).to.match(/^HTTP\/1\.1 400 /);
      }
      for (const user of ['framing1', 'framing2', 'framing3']) expect(await exists(user), user).to.equal(false);
    });
  });

  describe('XML-RPC', () => {
    const xmlrpcHead = `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/xml`;
    const registerCall = (user: string, pad: string) =>
      `<?xml version="1.0"?><methodCall><methodName>register</methodName><params><param>${encodeXmlRpc({ user: 'admin', server: 'localhost', password: 'adminpass', admin: true })}</param>` +
      `<param><value><struct><member><name>user</name><value>${user}</value></member><member><name>host</name><value>localhost</value></member><member><name>password</name><value>${pad}`;
    const registerEnd = '</value></member></struct></value></param></params></methodCall>';

    it('a small chunked call works', async () => {
      const res = await sendChunked(xmlrpcPort, closing(xmlrpcHead), { prefix: registerCall('chunk3', 'pw'), suffix: registerEnd });
      expect(res.status, res.raw).to.equal(200);
      expect(res.body).to.contain('successfully registered');
      expect(await exists('chunk3')).to.equal(true);
    });

    it('a chunked call past max_body_size is a 413 fault naming the limit, the connection is closed, and nobody is registered', async () => {
      const res = await sendChunked(xmlrpcPort, xmlrpcHead, { prefix: registerCall('chunk4', 'pw'), filler: 'x', total: 4 * 1024 * 1024, suffix: registerEnd });
      expectRefusedEarly(res);
      expect(res.body).to.contain('<name>faultCode</name><value><int>13</int></value>');
      expect(res.body).to.contain(`${LIMIT} bytes`).and.to.contain('max_body_size');
      expect(await exists('chunk4')).to.equal(false);
    });
  });

  describe('/oauth/token', () => {
    const tokenHead = `POST /oauth/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nAuthorization: ${basicAuth('backend', CLIENT_SECRET).authorization}`;

    it('a small chunked password grant works', async () => {
      const res = await sendChunked(httpPort, closing(tokenHead), { prefix: 'grant_type=password&username=ann%40localhost', suffix: '&password=ann-pw&scope=sasl_auth' });
      expect(res.status, res.raw).to.equal(200);
      expect(JSON.parse(res.body).access_token).to.be.a('string');
      expect(await tokensOf('ann')).to.have.length(1);
    });

    it('a chunked password grant past the limit is a 413 OAuth error naming it, the connection is closed, and no token is issued', async () => {
      const res = await sendChunked(httpPort, tokenHead, { prefix: 'grant_type=password&username=ann%40localhost&password=ann-pw&scope=sasl_auth&pad=', filler: 'x', total: 4 * 1024 * 1024, suffix: '' });
      expectRefusedEarly(res);
      const error = JSON.parse(res.body);
      expect(error.error).to.equal('invalid_request');
      expect(error.error_description).to.contain(`${LIMIT} bytes`);
      expect(await tokensOf('ann')).to.have.length(1);
    });
  });

  describe('afterwards', () => {
    it('the server still serves ordinary requests on /api, XML-RPC and /oauth, and only the small requests changed anything', async () => {
      expect((await t.api('registered_users', { host: 'localhost' }, { basic: ADMIN })).body).to.deep.equal(['admin', 'ann', 'chunk1', 'chunk3']);
      const xmlrpc = await xmlrpcCall(`http://127.0.0.1:${xmlrpcPort}/`, 'registered_users', { user: 'admin', server: 'localhost', password: 'adminpass', admin: true }, { host: 'localhost' });
      expect(xmlrpc.result).to.deep.equal({ users: [{ username: 'admin' }, { username: 'ann' }, { username: 'chunk1' }, { username: 'chunk3' }] });
      const metadata = await fetch(t.url('/oauth/.well-known/oauth-authorization-server'));
      expect(metadata.status).to.equal(200);
      expect(await tokensOf('ann')).to.have.length(1);
    });
  });
});
