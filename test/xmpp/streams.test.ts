/**
 * Stream negotiation details: the generated self-signed certificate, direct TLS, STARTTLS enforcement,
 * disable_sasl_mechanisms, and unregistering an account while it is logged in.
 */
import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { join } from 'node:path';
import { TestServer } from '../support/server.js';
import { login, stopAll, xmppConfig } from '../support/xmpp.js';

const HEADER = "<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' to='localhost' version='1.0'>";

/** Reads from a socket until `pattern` shows up in what was received. */
function readUntil(socket: Socket | TLSSocket, pattern: RegExp, ms = 3000): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => {
      socket.off('data', onData);
      reject(new Error(`timed out waiting for ${pattern}; got ${text}`));
    }, ms);
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      if (pattern.test(text)) {
        clearTimeout(timer);
        socket.off('data', onData);
        resolve(text);
      }
    };
    socket.on('data', onData);
  });
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = netConnect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

describe('stream negotiation', () => {
  describe('without certfiles', () => {
    let t: TestServer;
    before(async () => {
      const config = xmppConfig();
      delete config.certfiles;
      t = await TestServer.start(config);
    });
    after(() => t.stop());

    it('generates a self-signed certificate for the vhosts into the data directory, and says so', async () => {
      const pem = await readFile(join(t.dir, 'data', 'certs', 'selfsigned.pem'), 'utf8');
      const certificate = new X509Certificate(pem);
      expect(certificate.subjectAltName).to.include('DNS:localhost').and.include('DNS:example.com');
      expect(t.logged((l) => /generated a self-signed certificate/.test(l.msg ?? ''))).to.have.length(1);
      // STARTTLS uses it.
      const socket = await open(t.server.portOf('service_c2s')!);
      socket.write(HEADER);
      await readUntil(socket, /<\/stream:features>/);
      socket.write("<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>");
      await readUntil(socket, /<proceed/);
      const secure = tlsConnect({ socket, servername: 'localhost', rejectUnauthorized: false });
      await new Promise((resolve) => secure.once('secureConnect', resolve));
      expect(secure.getPeerX509Certificate()?.fingerprint256).to.equal(certificate.fingerprint256);
      secure.destroy();
    });
  });

  describe('with the test certificate', () => {
    let t: TestServer;
    before(async () => {
      const config = xmppConfig();
      (config.listen as any[]).push({ port: 0, ip: '127.0.0.1', module: 'service_c2s', tls: true, tag: 'direct' });
      config.disable_sasl_mechanisms = ['SCRAM-SHA-1', 'scram-sha-512'];
      t = await TestServer.start(config);
      await t.bootstrapAdmin();
      await t.server.services.accounts.register('erin', 'localhost', 'pw');
    });
    after(() => t.stop());

    it('offers only STARTTLS before TLS when it is required, and refuses SASL with encryption-required', async () => {
      const socket = await open(t.server.portOf('service_c2s')!);
      socket.write(HEADER);
      const features = await readUntil(socket, /<\/stream:features>/);
      expect(features).to.match(/<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'><required\/><\/starttls>/);
      expect(features).to.not.include('mechanisms');
      socket.write("<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>AGVyaW4AcHc=</auth>");
      expect(await readUntil(socket, /<\/failure>/)).to.include('<encryption-required/>');
      socket.destroy();
    });

    it('honours disable_sasl_mechanisms, whatever the case', async () => {
      const socket = await open(t.server.portOf('service_c2s')!);
      socket.write(HEADER);
      await readUntil(socket, /<\/stream:features>/);
      socket.write("<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>");
      await readUntil(socket, /<proceed/);
      const secure = tlsConnect({ socket, servername: 'localhost' });
      await new Promise((resolve) => secure.once('secureConnect', resolve));
      secure.write(HEADER);
      const features = await readUntil(secure, /<\/stream:features>/);
      const mechanisms = [...features.matchAll(/<mechanism>([^<]+)<\/mechanism>/g)].map((m) => m[1]);
      expect(mechanisms).to.include.members(['SCRAM-SHA-256', 'SCRAM-SHA-256-PLUS', 'PLAIN']);
      expect(mechanisms).to.not.include('SCRAM-SHA-1');
      expect(mechanisms).to.not.include('SCRAM-SHA-512');
      expect(features).to.match(/<sasl-channel-binding xmlns='urn:xmpp:sasl-cb:0'><channel-binding type='tls-exporter'\/>/);
      secure.destroy();
    });

    it('serves TLS from the first byte on a direct-TLS listener', async () => {
      const port = t.server.ports()[2]!;
      const secure = tlsConnect({ port, host: '127.0.0.1', servername: 'localhost' });
      await new Promise((resolve) => secure.once('secureConnect', resolve));
      secure.write(HEADER);
      const features = await readUntil(secure, /<\/stream:features>/);
      expect(features).to.not.include('starttls');
      expect(features).to.include("<mechanism>SCRAM-SHA-256</mechanism>");
      secure.destroy();
    });

    it('accepts a restarted stream and bind pipelined with SASL (XEP-0305)', async () => {
      const socket = await open(t.server.portOf('service_c2s')!);
      socket.write(HEADER + "<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>");
      await readUntil(socket, /<proceed/);
      const secure = tlsConnect({ socket, servername: 'localhost' });
      await new Promise((resolve) => secure.once('secureConnect', resolve));
      const plain = Buffer.from('\0erin\0pw').toString('base64');
      const received = readUntil(secure, /id='ping'/);
      secure.write(
        `${HEADER}<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>${plain}</auth>` +
          `<?xml version='1.0'?>${HEADER}<iq type='set' id='b'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><resource>piped</resource></bind></iq>` +
          "<iq type='get' id='ping' to='localhost'><ping xmlns='urn:xmpp:ping'/></iq>",
      );
      const text = await received;
      expect(text).to.include("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>");
      expect(text).to.include('<jid>erin@localhost/piped</jid>');
      secure.destroy();
    });

    it('gives each stream a new id, names the client in its header, and compares JIDs in their prepared form', async () => {
      const socket = await open(t.server.portOf('service_c2s')!);
      const header = HEADER.replace("to='localhost'", "to='localhost' from='Erin@LocalHost'");
      const ids: string[] = [];
      const idOf = (text: string) => /<stream:stream [^>]*\bid='([^']+)'/.exec(text)![1]!;
      socket.write(header + "<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>");
      const first = await readUntil(socket, /<proceed/);
      expect(first).to.match(/<stream:stream [^>]*\bto='erin@localhost'/);
      ids.push(idOf(first));
      const secure = tlsConnect({ socket, servername: 'localhost' });
      await new Promise((resolve) => secure.once('secureConnect', resolve));
      secure.write(header);
      const afterTls = await readUntil(secure, /<\/stream:features>/);
      ids.push(idOf(afterTls));
      secure.write(`<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>${Buffer.from('\0erin\0pw').toString('base64')}</auth>`);
      await readUntil(secure, /<success/);
      secure.write(header);
      ids.push(idOf(await readUntil(secure, /<\/stream:features>/)));
      expect(new Set(ids).size).to.equal(3);

      // A bind request without an id is refused; with one, it binds.
      secure.write("<iq type='set'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><resource>r</resource></bind></iq>");
      expect(await readUntil(secure, /<\/iq>/)).to.match(/type='error'[\s\S]*<bad-request/);
      secure.write("<iq type='set' id='b'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><resource>r</resource></bind></iq>");
      await readUntil(secure, /<jid>erin@localhost\/r<\/jid>/);
      // The account's own address in another case is still its address; a request without 'to' is
      // answered, error or not, from the account.
      secure.write("<iq type='get' id='u' from='ERIN@localhost/r'><query xmlns='urn:example:unknown'/></iq>");
      const unknown = await readUntil(secure, /id='u'[\s\S]*<\/iq>/);
      expect(unknown).to.match(/<iq [^>]*from='erin@localhost'/).and.match(/<service-unavailable/);
      expect(unknown).to.not.match(/from='localhost'|invalid-from/);
      secure.destroy();
    });

    it('closes a stream that does not negotiate in time with connection-timeout', async () => {
      await t.writeConfig({ ...xmppConfig(), listen: [...(xmppConfig().listen as any[]).slice(0, 1), { port: 0, ip: '127.0.0.1', module: 'service_c2s', negotiation_timeout: 1 }] });
      expect((await t.api('reload_config', {}, { basic: 'admin@localhost:adminpass' })).body).to.equal(0);
      const socket = await open(t.server.portOf('service_c2s')!);
      socket.write(HEADER);
      const text = await readUntil(socket, /<\/stream:stream>/, 4000);
      expect(text).to.include("<connection-timeout xmlns='urn:ietf:params:xml:ns:xmpp-streams'/>");
      socket.destroy();
    });

    it('logs out every session of an account that is removed, saying why', async () => {
      const client = await login(t, { user: 'erin', password: 'pw' });
      const error = new Promise<string>((resolve) => client.on('error', (err: any) => resolve(`${err.condition}: ${err.text}`)));
      expect((await t.api('unregister', { user: 'erin', host: 'localhost' }, { basic: 'admin@localhost:adminpass' })).status).to.equal(200);
      expect(await error).to.equal('not-authorized: Your account has been removed');
      await stopAll(client);
    });
  });
});
