/**
 * Quiet connections let their parser go (kernel/src/xmpp/c2s/quiet-parsers.ts): over a real TCP socket, a
 * connection that heard nothing for a sweep drops its parser only between two stanzas, and the parser that
 * takes over when bytes come again continues the stream exactly (prefixes declared on the header, a
 * character split across chunks, a stanza split across chunks, the stanza size limit).
 */
import { expect } from 'chai';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { DEFAULT_LIMITS, type XmlElement } from '@service/plugin-api';
import { TcpTransport } from '../../kernel/src/xmpp/c2s/tcp-transport.js';
import { QuietParsers } from '../../kernel/src/xmpp/c2s/quiet-parsers.js';

const HEADER = "<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' xmlns:ext='urn:example:ext' to='localhost' version='1.0'>";

interface Received {
  elements: XmlElement[];
  errors: string[];
  opens: number;
}

describe('quiet connections drop their parser', () => {
  let server: Server;
  let client: Socket;
  let quiet: QuietParsers;
  let got: Received;
  let transport: TcpTransport;

  beforeEach(async () => {
    quiet = new QuietParsers(3_600_000);
    got = { elements: [], errors: [], opens: 0 };
    const accepted = new Promise<TcpTransport>((resolve) => {
      server = createServer((socket) => {
        const t = new TcpTransport(socket, { ...DEFAULT_LIMITS, maxStanzaSize: 2048 }, undefined, false, quiet);
        t.setEvents({
          open: () => got.opens++,
          element: (element) => got.elements.push(element),
          close: () => {},
          error: (condition, text) => got.errors.push(`${condition}: ${text}`),
          disconnected: () => {},
        });
        resolve(t);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    client = connect(port, '127.0.0.1');
    transport = await accepted;
  });

  afterEach(async () => {
    client.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  const send = async (text: string | Buffer, count: number) => {
    client.write(text);
    const deadline = Date.now() + 5000;
    while (got.elements.length + got.errors.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  };

  it('between stanzas: dropped after a quiet sweep, and the next stanzas parse as before', async () => {
    await send(HEADER + "<message to='a@localhost'><body>one</body></message>", 1);
    expect(quiet.watching).to.equal(1);
    quiet.sweep(); // heard something since the start: kept
    expect(quiet.watching).to.equal(1);
    quiet.sweep(); // quiet for a whole sweep: dropped
    expect(quiet.watching).to.equal(0);

    // The prefix declared on the header, a stanza and a two-byte character split across chunks.
    const tail = Buffer.from("<message to='b@localhost'><body>caf\u00e9</body><ext:x/></message>");
    const cut = tail.indexOf(0xc3) + 1;
    client.write(tail.subarray(0, cut));
    await new Promise((r) => setTimeout(r, 50));
    await send(tail.subarray(cut), 2);
    expect(got.errors).to.deep.equal([]);
    expect(got.opens).to.equal(1);
    const second = got.elements[1]!;
    expect(second.getChildText('body')).to.equal('café');
    expect(second.getChild('x', 'urn:example:ext')).to.not.equal(undefined);
    expect(second.attr('to')).to.equal('b@localhost');
    expect(quiet.watching).to.equal(1);
  });

  it('keeps the parser of a connection in the middle of a stanza, or of a character', async () => {
    await send(HEADER + "<message to='a@localhost'><body>one</body></message><message><body>tw", 1);
    quiet.sweep();
    quiet.sweep();
    expect(quiet.watching, 'a stanza is half read').to.equal(1);
    await send('o</body></message>', 2);
    expect(got.elements[1]!.getChildText('body')).to.equal('two');

    // The connection's last byte starts a multi-byte character: the decoder holds half of it, and the parser
    // (between stanzas, having seen only whitespace) would be dropped with it.
    await send(Buffer.concat([Buffer.from('<presence/> '), Buffer.from('\u00e9').subarray(0, 1)]), 3);
    quiet.sweep();
    quiet.sweep();
    expect(quiet.watching, 'a character is half read').to.equal(1);
  });

  it('a continued parser still enforces the stanza size limit and the restrictions', async () => {
    await send(HEADER + '<presence/>', 1);
    quiet.sweep();
    quiet.sweep();
    expect(quiet.watching).to.equal(0);
    await send(`<message><body>${'a'.repeat(4096)}</body></message>`, 2);
    expect(got.errors).to.have.length(1);
    expect(got.errors[0]).to.match(/^policy-violation/);
  });

  it('a closed connection stops being watched', async () => {
    await send(HEADER, 0);
    await new Promise((r) => setTimeout(r, 50));
    expect(quiet.watching).to.equal(1);
    client.destroy();
    const deadline = Date.now() + 5000;
    while (quiet.watching > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    expect(quiet.watching).to.equal(0);
    expect(transport).to.not.equal(undefined);
  });
});
