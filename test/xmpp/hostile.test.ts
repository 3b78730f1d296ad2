/**
 * Hostile input on client streams: each case sends what a broken or malicious peer would (billion laughs,
 * huge stanzas, deep nesting, invalid UTF-8, a bare ampersand, stanzas before authentication, floods of
 * opens…) over a raw socket, and expects the stream error RFC 6120 names for it — early, without the
 * server buffering the input. Throughout, two real clients keep chatting: after each case a message
 * from one must reach the other, and a background chat runs the whole time.
 */
import { expect } from 'chai';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { TestServer } from '../support/server.js';
import { RawWsPeer, RawXmppPeer, NS_STREAM, streamHeader, type HeaderOptions, type StreamErrorInfo } from '../support/raw-xmpp.js';
import { login, next, stopAll, xml, xmppConfig, type Client } from '../support/xmpp.js';

const MiB = 1024 * 1024;
/** The stanza size limit the server runs with here (the default max_stanza_size). */
const MAX_STANZA = 262144;
/** A hostile payload must be refused before this much of it was sent: the server does not buffer it. */
const EARLY = 1 * MiB;
const NEGOTIATION_TIMEOUT_S = 2;

const BILLION_LAUGHS_DTD =
  '<!DOCTYPE stream:stream [' +
  '<!ENTITY lol "lol">' +
  Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i === 0 ? '' : i};`.repeat(10)}">`).join('') +
  ']>';

function fullGc(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

function rssMiB(): number {
  return process.memoryUsage().rss / MiB;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

describe('hostile input on client streams', function () {
  this.timeout(120_000);
  let t: TestServer;
  let c2sPort: number;
  let alice: Client;
  let bob: Client;
  let baselineRss = 0;
  let healthChecks = 0;
  const peers: Array<RawXmppPeer | RawWsPeer> = [];

  /** The background chat: alice → bob every 100 ms, each message's latency recorded on arrival. */
  const chat = { sent: 0, received: new Map<number, number>(), sentAt: new Map<number, number>(), timer: undefined as NodeJS.Timeout | undefined };

  async function raw(): Promise<RawXmppPeer> {
    const peer = await RawXmppPeer.connect(c2sPort);
    peers.push(peer);
    return peer;
  }

  async function rawWs(): Promise<RawWsPeer> {
    const peer = await RawWsPeer.connect(t.port);
    peers.push(peer);
    return peer;
  }

  /** A message from alice reaches bob (and one from bob reaches alice) within 5 s. */
  async function stillChatting(): Promise<void> {
    const n = ++healthChecks;
    const atBob = next(bob, (s) => s.is('message') && s.getChildText('body') === `health ${n}`);
    await alice.send(xml('message', { to: 'bob@localhost/b', type: 'chat' }, xml('body', {}, `health ${n}`)));
    await atBob;
    const atAlice = next(alice, (s) => s.is('message') && s.getChildText('body') === `health back ${n}`);
    await bob.send(xml('message', { to: 'alice@localhost/a', type: 'chat' }, xml('body', {}, `health back ${n}`)));
    await atAlice;
  }

  /** A hostile case, followed by the health check whatever its outcome. */
  function hostile(title: string, body: () => Promise<void>): void {
    it(title, async () => {
      let failure: unknown;
      try {
        await body();
      } catch (err) {
        failure = err;
      }
      await stillChatting();
      if (failure) throw failure;
    });
  }

  function expectCondition(error: StreamErrorInfo, condition: string | string[]): void {
    const wanted = Array.isArray(condition) ? condition : [condition];
    expect(wanted, `stream error <${error.condition}/> (${error.text ?? 'no text'}) instead of <${wanted.join('/> or <')}/>`).to.include(error.condition);
  }

  /** Opens a stream (header, features), sends `input`, expects the stream error and the connection closed. */
  async function expectStreamError(input: string | Buffer | Array<string | Buffer>, condition: string | string[], options: { header?: HeaderOptions | false } = {}): Promise<StreamErrorInfo> {
    const peer = await raw();
    if (options.header !== false) await peer.open(options.header ?? {});
    for (const part of Array.isArray(input) ? input : [input]) peer.write(part);
    const error = await peer.streamError();
    expectCondition(error, condition);
    await peer.waitClosed();
    return error;
  }

  /**
   * Sends `prefix`, then `filler` repeatedly up to `total` bytes (stopping as soon as a stream error
   * arrives), then `suffix` if the server has not answered yet; expects `condition` before EARLY bytes
   * were written.
   */
  async function expectEarlyError(peer: RawXmppPeer, parts: { prefix: string; filler: string; total: number; suffix: string }, condition: string | string[]): Promise<{ error: StreamErrorInfo; writtenAtError: number; rssGrowthMiB: number }> {
    fullGc();
    const rssBefore = rssMiB();
    const start = peer.bytesWritten;
    let peak = rssBefore;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMiB())), 20);
    try {
      peer.write(parts.prefix);
      await peer.writeRepeated(parts.filler, parts.total, () => peer.bytesWrittenAtError !== undefined, 1);
      peak = Math.max(peak, rssMiB());
      if (peer.bytesWrittenAtError === undefined) peer.write(parts.suffix);
      let error: StreamErrorInfo;
      try {
        error = await peer.streamError(10_000);
      } catch {
        const how = peer.isClosed ? 'the server closed the connection' : 'nothing happened for 10 s';
        throw new Error(`no stream error: ${how} after ${((peer.bytesWritten - start) / 1024).toFixed(0)} KiB were sent, and sent back ${(Buffer.byteLength(peer.all) / 1024).toFixed(0)} KiB ending in ${JSON.stringify(peer.all.slice(-120))}; expected <${[condition].flat().join('/> or <')}/> before ${EARLY / 1024} KiB`);
      }
      peak = Math.max(peak, rssMiB());
      const writtenAtError = (peer.bytesWrittenAtError ?? peer.bytesWritten) - start;
      const wanted = Array.isArray(condition) ? condition : [condition];
      const outcome = `<${error.condition}/> (${error.text ?? 'no text'}) after ${(writtenAtError / 1024).toFixed(0)} KiB were sent (RSS +${(peak - rssBefore).toFixed(1)} MiB meanwhile)`;
      if (process.env.HOSTILE_DEBUG) console.log(`      ${outcome}`);
      if (!wanted.includes(error.condition) || writtenAtError >= EARLY) expect.fail(`${outcome}; expected <${wanted.join('/> or <')}/> before ${EARLY / 1024} KiB`);
      await peer.waitClosed(10_000);
      return { error, writtenAtError, rssGrowthMiB: peak - rssBefore };
    } finally {
      clearInterval(sampler);
    }
  }

  before(async () => {
    const config = xmppConfig();
    const c2s = (config.listen as Array<Record<string, unknown>>).find((l) => l.module === 'service_c2s')!;
    c2s.negotiation_timeout = NEGOTIATION_TIMEOUT_S;
    t = await TestServer.start(config);
    c2sPort = t.server.portOf('service_c2s')!;
    const accounts = t.server.services.accounts;
    await accounts.register('alice', 'localhost', 'alice-pw');
    await accounts.register('bob', 'localhost', 'bob-pw');
    await accounts.register('mallory', 'localhost', 'mallory-pw');
    alice = await login(t, { user: 'alice', password: 'alice-pw', resource: 'a', mechanism: 'SCRAM-SHA-256' });
    bob = await login(t, { user: 'bob', password: 'bob-pw', resource: 'b', mechanism: 'SCRAM-SHA-256' });
    bob.on('stanza', (s: any) => {
      const body = s.is('message') ? s.getChildText('body') : null;
      const m = body ? /^chat (\d+)$/.exec(body) : null;
      if (m) chat.received.set(Number(m[1]), Date.now() - chat.sentAt.get(Number(m[1]))!);
    });
    chat.timer = setInterval(() => {
      const n = ++chat.sent;
      chat.sentAt.set(n, Date.now());
      alice.send(xml('message', { to: 'bob@localhost/b', type: 'chat' }, xml('body', {}, `chat ${n}`))).catch(() => {});
    }, 100);
    fullGc();
    baselineRss = rssMiB();
  });

  afterEach(() => {
    for (const peer of peers.splice(0)) {
      if (peer instanceof RawXmppPeer) peer.destroy();
      else peer.close();
    }
  });

  after(async () => {
    if (chat.timer) clearInterval(chat.timer);
    await stopAll(alice, bob);
    await t?.stop();
  });

  // ---------------------------------------------------------------------------------------------------
  // Entities and DTDs

  hostile('billion laughs: a DOCTYPE with nested entities before the stream header → restricted-xml', async () => {
    const peer = await raw();
    peer.write(`<?xml version='1.0'?>${BILLION_LAUGHS_DTD}${streamHeader({ declaration: false })}<message><body>&lol9;</body></message>`);
    expectCondition(await peer.streamError(), 'restricted-xml');
    await peer.waitClosed();
  });

  hostile('billion laughs: the same DOCTYPE inside an open stream → restricted-xml', async () => {
    await expectStreamError(`${BILLION_LAUGHS_DTD}<message><body>&lol9;</body></message>`, 'restricted-xml');
  });

  hostile('a reference to an entity that is not one of the five predefined ones → restricted-xml', async () => {
    await expectStreamError('<message><body>&lol9;</body></message>', 'restricted-xml');
  });

  // ---------------------------------------------------------------------------------------------------
  // Size

  hostile('a 10 MiB stanza → policy-violation, before 1 MiB of it was sent', async () => {
    const peer = await raw();
    await peer.open();
    const result = await expectEarlyError(peer, { prefix: "<message to='bob@localhost'><body>", filler: 'x'.repeat(64 * 1024), total: 10 * MiB, suffix: '</body></message>' }, 'policy-violation');
    expect(result.writtenAtError).to.be.above(MAX_STANZA - 64 * 1024);
    expect(result.rssGrowthMiB, 'RSS growth while sending 10 MiB').to.be.below(10);
  });

  hostile('a 10 MiB stanza after authentication (over TLS) → policy-violation, before 1 MiB of it was sent', async () => {
    const peer = await raw();
    await peer.login('mallory', 'mallory-pw', { resource: 'm' });
    await expectEarlyError(peer, { prefix: "<message to='nobody@localhost'><body>", filler: 'x'.repeat(64 * 1024), total: 10 * MiB, suffix: '</body></message>' }, 'policy-violation');
  });

  hostile('a 10 MiB attribute value in a stanza after authentication → policy-violation, not a 10 MiB stanza routed', async () => {
    const peer = await raw();
    const jid = await peer.login('mallory', 'mallory-pw', { resource: 'm2' });
    await expectEarlyError(peer, { prefix: `<message to='${jid}' type='chat' x='`, filler: 'x'.repeat(64 * 1024), total: 10 * MiB, suffix: "'><body>to myself</body></message>" }, 'policy-violation');
  });

  // The limit must hold whatever part of the input carries the bytes: each of these is buffered whole
  // by the XML parser (saxes) until its end, unless the framing layer counts it.
  const unbuffered: Array<{ what: string; prefix: string; suffix: string; condition: string[]; header?: false }> = [
    { what: 'an attribute value of the stanza element', prefix: "<message to='bob@localhost' x='", suffix: "'/>", condition: ['policy-violation'] },
    { what: 'the stanza element name', prefix: '<message', suffix: '/>', condition: ['policy-violation'] },
    { what: 'text between stanzas', prefix: '', suffix: '<presence/>', condition: ['not-well-formed', 'policy-violation'] },
    { what: 'an unterminated comment', prefix: '<!--', suffix: '-->', condition: ['restricted-xml', 'policy-violation'] },
    { what: 'an unterminated processing instruction', prefix: '<?pi ', suffix: '?>', condition: ['restricted-xml', 'policy-violation'] },
    { what: 'an unterminated CDATA section between stanzas', prefix: '<![CDATA[', suffix: ']]>', condition: ['not-well-formed', 'policy-violation'] },
    { what: 'an attribute of the stream header', prefix: `<stream:stream xmlns='jabber:client' xmlns:stream='${NS_STREAM}' version='1.0' to='localhost' x='`, suffix: "'>", condition: ['policy-violation'], header: false },
  ];
  for (const c of unbuffered) {
    hostile(`10 MiB in ${c.what} → <${c.condition.join('/> or <')}/>, before 1 MiB of it was sent`, async () => {
      const peer = await raw();
      if (c.header !== false) await peer.open();
      await expectEarlyError(peer, { prefix: c.prefix, filler: 'x'.repeat(64 * 1024), total: 10 * MiB, suffix: c.suffix }, c.condition);
    });
  }

  hostile('100 000 nested elements → policy-violation', async () => {
    const peer = await raw();
    await peer.open();
    const result = await expectEarlyError(peer, { prefix: '', filler: '<a>'.repeat(1000), total: 300_000, suffix: '' }, 'policy-violation');
    expect(result.error.text).to.match(/nested/);
  });

  // ---------------------------------------------------------------------------------------------------
  // Encoding and well-formedness

  hostile('invalid UTF-8 (0xFF 0xFE) → not-well-formed', async () => {
    await expectStreamError([Buffer.from('<message><body>'), Buffer.from([0xff, 0xfe]), Buffer.from('</body></message>')], 'not-well-formed');
  });

  hostile('an overlong UTF-8 encoding (0xC0 0x80) → not-well-formed', async () => {
    await expectStreamError([Buffer.from('<message><body>'), Buffer.from([0xc0, 0x80]), Buffer.from('</body></message>')], 'not-well-formed');
  });

  hostile('a UTF-8-encoded surrogate (0xED 0xA0 0x80) → not-well-formed', async () => {
    await expectStreamError([Buffer.from('<message><body>'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('</body></message>')], 'not-well-formed');
  });

  hostile('a character XML forbids (U+0000) → not-well-formed', async () => {
    await expectStreamError('<message><body>\u0000</body></message>', 'not-well-formed');
  });

  hostile('a bare & in text → not-well-formed', async () => {
    await expectStreamError('<message><body>fish & chips</body></message>', 'not-well-formed');
  });

  hostile('a bare & in an attribute value → not-well-formed', async () => {
    await expectStreamError("<message to='a&b@localhost'/>", 'not-well-formed');
  });

  hostile('a bare & with nothing after it for a while → not-well-formed once the next character shows it', async () => {
    const peer = await raw();
    await peer.open();
    peer.write('<message><body>fish &');
    await sleep(200);
    peer.write(' chips</body></message>');
    expectCondition(await peer.streamError(), 'not-well-formed');
  });

  hostile('a comment between stanzas → restricted-xml', async () => {
    await expectStreamError('<!-- hello -->', 'restricted-xml');
  });

  hostile('a comment inside a stanza → restricted-xml', async () => {
    await expectStreamError('<message><!-- hello --><body>x</body></message>', 'restricted-xml');
  });

  hostile('a processing instruction → restricted-xml', async () => {
    await expectStreamError("<?xml-stylesheet href='x.xsl'?>", 'restricted-xml');
  });

  hostile('text between stanzas (followed by a tag) → not-well-formed', async () => {
    await expectStreamError('hello</stream:stream>', 'not-well-formed');
  });

  hostile('text between stanzas, and then nothing → not-well-formed (not a wait for the next tag)', async () => {
    await expectStreamError('hello', 'not-well-formed');
  });

  hostile('mismatched tags → not-well-formed', async () => {
    await expectStreamError('<message><body>x</message>', 'not-well-formed');
  });

  // ---------------------------------------------------------------------------------------------------
  // The stream header

  hostile('a wrong stream namespace → invalid-namespace', async () => {
    const peer = await raw();
    peer.write(streamHeader({ streamNs: 'http://example.com/not-streams' }));
    expectCondition(await peer.streamError(), 'invalid-namespace');
    await peer.waitClosed();
  });

  hostile('a wrong content namespace (jabber:server on c2s) → invalid-namespace', async () => {
    const peer = await raw();
    peer.write(streamHeader({ xmlns: 'jabber:server' }));
    expectCondition(await peer.streamError(), 'invalid-namespace');
  });

  hostile("an unknown 'to' host → host-unknown", async () => {
    const peer = await raw();
    peer.write(streamHeader({ to: 'elsewhere.example' }));
    const error = await peer.streamError();
    expectCondition(error, 'host-unknown');
    // The server opened its side of the stream before the error (RFC 6120 §4.9.1.1).
    expect(peer.all).to.match(/^<\?xml[^>]*\?><stream:stream\b/);
    await peer.waitClosed();
  });

  hostile("no 'version' → unsupported-version", async () => {
    const peer = await raw();
    peer.write(streamHeader({ version: null }));
    expectCondition(await peer.streamError(), 'unsupported-version');
  });

  hostile("version='2.0' → unsupported-version", async () => {
    const peer = await raw();
    peer.write(streamHeader({ version: '2.0' }));
    expectCondition(await peer.streamError(), 'unsupported-version');
  });

  // ---------------------------------------------------------------------------------------------------
  // Before authentication

  hostile('<message> before authentication → not-authorized', async () => {
    await expectStreamError("<message to='bob@localhost/b' type='chat'><body>let me in</body></message>", 'not-authorized');
  });

  hostile('<iq> before authentication → not-authorized', async () => {
    await expectStreamError("<iq type='get' id='1'><query xmlns='jabber:iq:roster'/></iq>", 'not-authorized');
  });

  hostile("<message> after TLS and SASL but before binding → not-authorized", async () => {
    const peer = await raw();
    await peer.open();
    await peer.startTls();
    await peer.open();
    peer.write(`<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>${Buffer.from('\0mallory\0mallory-pw').toString('base64')}</auth>`);
    await peer.waitFor(/<success\b/);
    await peer.open();
    peer.write("<message to='bob@localhost/b' type='chat'><body>unbound</body></message>");
    expectCondition(await peer.streamError(), 'not-authorized');
  });

  // ---------------------------------------------------------------------------------------------------
  // Floods

  hostile(`500 connections that open a stream and stay silent: all answered, all closed with connection-timeout after ${NEGOTIATION_TIMEOUT_S} s`, async () => {
    const openedAt = Date.now();
    const flood = await Promise.all(Array.from({ length: 500 }, () => raw()));
    await Promise.all(flood.map((peer) => peer.open({}, 10_000)));
    const answeredAt = Date.now();
    for (const peer of flood) expect(peer.all).to.match(/<stream:stream\b[^>]*>/).and.to.match(/<stream:features>/);
    // While they wait, a real client can still chat.
    await stillChatting();
    const errors = await Promise.all(flood.map((peer) => peer.streamError(NEGOTIATION_TIMEOUT_S * 1000 + 8000)));
    const closedAt = Date.now();
    const conditions = new Map<string, number>();
    for (const error of errors) conditions.set(error.condition, (conditions.get(error.condition) ?? 0) + 1);
    expect(Object.fromEntries(conditions)).to.deep.equal({ 'connection-timeout': 500 });
    await Promise.all(flood.map((peer) => peer.waitClosed(8000)));
    // Not before the timeout (measured from when the last one was answered, minus the time it took).
    expect(closedAt - openedAt).to.be.at.least(NEGOTIATION_TIMEOUT_S * 1000 - 100);
    expect(closedAt - answeredAt).to.be.below(NEGOTIATION_TIMEOUT_S * 1000 + 6000);
  });

  hostile('one connection sending <stream:stream …> 10 000 times → policy-violation (nesting)', async () => {
    const peer = await raw();
    await peer.open();
    const header = streamHeader({ declaration: false });
    const result = await expectEarlyError(peer, { prefix: '', filler: header.repeat(100), total: header.length * 10_000, suffix: '' }, 'policy-violation');
    expect(result.writtenAtError).to.be.below(200 * 1024);
  });

  hostile('1 000 stream headers on 1 000 connections at once, each then sending a stanza → 1 000 × not-authorized', async () => {
    const flood = await Promise.all(Array.from({ length: 1000 }, () => raw()));
    for (const peer of flood) peer.write(`${streamHeader()}<message to='bob@localhost/b'><body>spam</body></message>`);
    const errors = await Promise.all(flood.map((peer) => peer.streamError(10_000)));
    expect(errors.filter((e) => e.condition === 'not-authorized')).to.have.length(1000);
  });

  /**
   * Opens `count` connections (in batches of 50), each opening a stream and, with `tls`, doing STARTTLS;
   * then closes them all properly. The peers are not kept (not even in `peers`): the heap measured after
   * this must hold nothing of them on our side.
   */
  async function openAndClose(count: number, tls: boolean): Promise<void> {
    const opened: RawXmppPeer[] = [];
    try {
      for (let i = 0; i < count; i += 50) {
        const batch = Array.from({ length: Math.min(50, count - i) }, async () => {
          const peer = await RawXmppPeer.connect(c2sPort);
          opened.push(peer);
          await peer.open();
          if (tls) {
            await peer.startTls();
            await peer.open();
          }
        });
        await Promise.all(batch);
      }
      for (const peer of opened) {
        peer.write('</stream:stream>');
        peer.end();
      }
      await Promise.all(opened.map((peer) => peer.waitClosed(10_000)));
    } finally {
      for (const peer of opened.splice(0)) peer.destroy();
    }
    // The server drops a closed connection's transport within 5 s (its destroy timer).
    await sleep(5500);
  }

  for (const tls of [false, true]) {
    hostile(`500 connections that open a stream${tls ? ', do STARTTLS' : ''} and close leave nothing behind in the server's heap`, async () => {
      await openAndClose(100, tls); // warm-up: first-use allocations (TLS contexts, code) are not a leak
      fullGc();
      const before = process.memoryUsage().heapUsed;
      await openAndClose(500, tls);
      fullGc();
      const growth = (process.memoryUsage().heapUsed - before) / MiB;
      expect(growth, `the heap grew by ${growth.toFixed(2)} MiB (${((growth * 1024) / 500).toFixed(1)} KiB per closed connection)`).to.be.below(2.5);
    });
  }

  // ---------------------------------------------------------------------------------------------------
  // WebSocket (RFC 7395)

  hostile('WebSocket: invalid XML in a frame → not-well-formed', async () => {
    const peer = await rawWs();
    await peer.open();
    peer.send('<message><body>unclosed</message>');
    expectCondition(await peer.streamError(), 'not-well-formed');
    await peer.waitClosed();
  });

  hostile('WebSocket: a TCP stream header, or <open/> in another namespace → invalid-namespace', async () => {
    const header = await rawWs();
    header.send("<stream:stream xmlns:stream='http://etherx.jabber.org/streams' xmlns='jabber:client' to='localhost' version='1.0'>");
    const headerError = await header.streamError();
    expectCondition(headerError, 'invalid-namespace');
    expect(headerError.text).to.match(/opens with <open\/>/);
    await header.waitClosed();
    const wrong = await rawWs();
    wrong.send("<open xmlns='urn:example:wrong' to='localhost' version='1.0'/>");
    expectCondition(await wrong.streamError(), 'invalid-namespace');
    await wrong.waitClosed();
  });

  hostile('WebSocket: a bare & in a frame → not-well-formed', async () => {
    const peer = await rawWs();
    await peer.open();
    peer.send("<message xmlns='jabber:client'><body>fish & chips</body></message>");
    expectCondition(await peer.streamError(), 'not-well-formed');
  });

  hostile('WebSocket: a binary frame → bad-format', async () => {
    const peer = await rawWs();
    await peer.open();
    peer.send(Buffer.from(`<message xmlns='jabber:client'><body>binary</body></message>`), true);
    expectCondition(await peer.streamError(), 'bad-format');
    await peer.waitClosed();
  });

  hostile('WebSocket: a 1 MiB frame (over max_stanza_size) → policy-violation', async () => {
    const peer = await rawWs();
    await peer.open();
    peer.send(`<message xmlns='jabber:client'><body>${'x'.repeat(MiB)}</body></message>`);
    expectCondition(await peer.streamError(), 'policy-violation');
    await peer.waitClosed();
  });

  hostile('WebSocket: a 20 MiB frame → the WebSocket is closed with 1009 (message too big)', async () => {
    const peer = await rawWs();
    await peer.open();
    peer.send(`<message xmlns='jabber:client'><body>${'x'.repeat(20 * MiB)}</body></message>`);
    await peer.waitClosed(10_000);
    expect(peer.closeCode).to.equal(1009);
  });

  hostile('WebSocket: billion laughs in a frame → restricted-xml', async () => {
    const peer = await rawWs();
    await peer.open();
    peer.send(`${BILLION_LAUGHS_DTD}<message xmlns='jabber:client'><body>&lol9;</body></message>`);
    expectCondition(await peer.streamError(), 'restricted-xml');
  });

  hostile('WebSocket: a stanza before <open/> → not-authorized', async () => {
    const peer = await rawWs();
    peer.send("<message xmlns='jabber:client' to='bob@localhost/b'><body>hi</body></message>");
    expectCondition(await peer.streamError(), 'not-authorized');
  });

  hostile(`WebSocket: <open/> on 200 connections, then silence → connection-timeout after ${NEGOTIATION_TIMEOUT_S} s`, async () => {
    const flood = await Promise.all(Array.from({ length: 200 }, () => rawWs()));
    await Promise.all(flood.map((peer) => peer.open()));
    const errors = await Promise.all(flood.map((peer) => peer.streamError(NEGOTIATION_TIMEOUT_S * 1000 + 8000)));
    expect(errors.filter((e) => e.condition === 'connection-timeout')).to.have.length(200);
  });

  // ---------------------------------------------------------------------------------------------------

  it('the server stayed healthy throughout: running, every chat message delivered, memory reasonable, nothing logged as an error', async () => {
    await sleep(500);
    const status = await t.api('status', {});
    expect(status.status).to.equal(200);
    expect(status.body).to.match(/is started/);
    const lost = [...chat.sentAt.keys()].filter((n) => n < chat.sent - 5 && !chat.received.has(n));
    expect(lost, 'background chat messages that never arrived').to.deep.equal([]);
    const latencies = [...chat.received.values()].sort((a, b) => a - b);
    expect(latencies.length).to.be.above(50);
    const p99 = latencies[Math.ceil(latencies.length * 0.99) - 1]!;
    expect(p99, `p99 latency of the background chat (max ${latencies[latencies.length - 1]} ms)`).to.be.below(1000);
    fullGc();
    const growth = rssMiB() - baselineRss;
    expect(growth, `RSS grew by ${growth.toFixed(1)} MiB over the whole suite`).to.be.below(150);
    const errors = t.logged((line) => typeof line.level === 'number' && line.level >= 50);
    // The log was captured (the listeners' start is in it): an empty list of errors means something.
    expect(t.logged((line) => /^listening for XMPP clients/.test(String(line.msg)))).to.not.be.empty;
    expect(errors.map((l) => l.msg)).to.deep.equal([]);
  });
});
