/**
 * Hostile bodies on the XML-RPC listener (service_xmlrpc) and, where JSON has the same trap, on /api: entity
 * expansion (billion laughs, external entities), nesting thousands of levels deep, and struct members named
 * to reach an object's prototype. Each must be answered at once with a fault (or a 4xx) that names the
 * problem, without the server expanding, recursing or slowing down, and the next ordinary call must work.
 */
import { expect } from 'chai';
import { TestServer } from '../support/server.js';
import { encodeXmlRpc, xmlrpcCall, xmlrpcPost, type XmlRpcAnswer } from '../support/xmlrpc.js';

const ADMIN = 'admin@localhost:adminpass';
const ADMIN_STRUCT = { user: 'admin', server: 'localhost', password: 'adminpass', admin: true };
/** Every hostile body here must be answered within this (a bomb expanded or a deep recursion takes far longer). */
const FAST_MS = 1500;

/** The administrator's credentials struct, as the first param. */
const ADMIN_PARAM = `<param>${encodeXmlRpc(ADMIN_STRUCT)}</param>`;

const call = (method: string, params: string) =>
  `<?xml version="1.0"?><methodCall><methodName>${method}</methodName><params>${params}</params></methodCall>`;

const BILLION_LAUGHS =
  '<?xml version="1.0"?><!DOCTYPE methodCall [<!ENTITY lol "lol">' +
  Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i === 0 ? '' : i};`.repeat(10)}">`).join('') +
  ']>' +
  '<methodCall><methodName>status</methodName><params><param><value><struct><member><name>x</name><value><string>&lol9;</string></value></member></struct></value></param></params></methodCall>';

describe('attacks on XML-RPC and JSON bodies', function () {
  this.timeout(60_000);
  let t: TestServer;
  let url: string;

  /** POSTs `body`, expecting a fault naming the problem, quickly; then an ordinary call still works. */
  async function expectFault(body: string, pattern: RegExp): Promise<XmlRpcAnswer> {
    const started = Date.now();
    const answer = await xmlrpcPost(url, body);
    const elapsed = Date.now() - started;
    expect(answer.fault, `status ${answer.status}, result ${JSON.stringify(answer.result)}`).to.not.equal(undefined);
    expect(answer.fault!.faultCode).to.equal(40);
    expect(answer.fault!.faultString).to.match(pattern);
    expect(elapsed, `answered after ${elapsed} ms`).to.be.below(FAST_MS);
    await stillServing();
    return answer;
  }

  async function stillServing(): Promise<void> {
    const ok = await xmlrpcCall(url, 'registered_users', ADMIN_STRUCT, { host: 'localhost' });
    expect(ok.result, JSON.stringify(ok.fault)).to.deep.equal({ users: [{ username: 'admin' }, { username: 'ann' }] });
  }

  before(async () => {
    const config = {
      hosts: ['localhost'],
      listen: [
        { port: 0, ip: '127.0.0.1', module: 'service_http', request_handlers: { '/api': 'mod_http_api' } },
        { port: 0, ip: '127.0.0.1', module: 'service_xmlrpc' },
      ],
      acl: { admin: { user: 'admin@localhost' }, loopback: { ip: ['127.0.0.0/8', '::1/128'] } },
      api_permissions: {
        'public commands': { who: { acl: 'loopback' }, what: ['status'] },
        'admin access': { who: { acl: 'admin' }, what: '*' },
      },
      modules: { mod_http_api: {} },
    };
    t = await TestServer.start(config);
    await t.bootstrapAdmin();
    await t.server.services.accounts.register('ann', 'localhost', 'ann-pw');
    url = `http://127.0.0.1:${t.server.portOf('service_xmlrpc')}/`;
  });
  after(() => t?.stop());

  describe('entities', () => {
    it('billion laughs (nested entity definitions in a DTD) is a fault naming the DTD, answered at once', async () => {
      const rss = process.memoryUsage().rss;
      await expectFault(BILLION_LAUGHS, /^the request's XML is refused: a document type declaration \(DTD, where entities are defined\) is not allowed$/);
      expect(process.memoryUsage().rss - rss, 'memory grew by the expansion').to.be.below(64 * 1024 * 1024);
    });

    it('an external entity (XXE: a file of the server) is refused, and nothing of the file comes back', async () => {
      for (const entity of ['<!ENTITY xxe SYSTEM "file:///etc/passwd">', '<!ENTITY % xxe SYSTEM "http://127.0.0.1:1/evil.dtd"> %xxe;']) {
        const body = `<?xml version="1.0"?><!DOCTYPE methodCall [${entity}]>${call('status', '<param><value><string>&xxe;</string></value></param>')}`;
        const answer = await expectFault(body, /document type declaration \(DTD/);
        expect(JSON.stringify(answer)).to.not.match(/root:|daemon:/);
      }
    });

    it('an entity reference without a DTD is a fault naming the undefined entity', async () => {
      await expectFault(call('status', '<param><value><string>&lol9;</string></value></param>'), /refused: a reference to an undefined entity: only &lt; &gt; &amp; &quot; &apos; and character references are allowed$/);
    });

    it('character references to characters XML forbids are a fault', async () => {
      await expectFault(call('status', '<param><value><string>&#0;</string></value></param>'), /^the request is not valid XML: \D*$/);
      await expectFault(call('status', '<param><value><string>&#xFFFE;</string></value></param>'), /^the request is not valid XML: \D*$/);
    });

    it('a DTD after the root element, a comment or a processing instruction is a fault', async () => {
      await expectFault(`${call('status', '')}<!DOCTYPE x [<!ENTITY a "b">]>`, /refused: .*comments and DTDs are not allowed$|document type declaration/);
      await expectFault(call('status', '<!-- hidden --><param><value>1</value></param>'), /refused: comments are not allowed$/);
      await expectFault(call('status', '<?evil x?>'), /refused: processing instructions are not allowed/);
    });
  });

  describe('nesting', () => {
    it('values nested 20 000 levels deep (arrays, 800 KB) are a fault naming the depth limit, answered at once', async () => {
      const depth = 20_000;
      const body = call('status', `<param>${'<value><array><data>'.repeat(depth)}${'</data></array></value>'.repeat(depth)}</param>`);
      await expectFault(body, /^the request's XML is refused: elements nested deeper than 64 levels$/);
    });

    it('structs nested deep enough to pass the parser but not the decoder are refused without a stack overflow', async () => {
      // 15 levels of value → struct → member (45 elements, 55 with the call around them), under the parser's 64:
      // decoded, then refused by the command.
      const depth = 15;
      const nested = `${'<value><struct><member><name>m</name>'.repeat(depth)}<value>x</value>${'</member></struct></value>'.repeat(depth)}`;
      const answer = await xmlrpcPost(url, call('registered_users', `${ADMIN_PARAM}<param><value><struct><member><name>host</name>${nested}</member></struct></value></param>`));
      expect(answer.fault?.faultString, JSON.stringify(answer)).to.match(/host/);
      await stillServing();
    });

    it('a megabyte of unclosed elements is refused at the depth limit (or the size limit), not after parsing it', async () => {
      const body = call('status', `<param>${'<a>'.repeat(300_000)}`);
      const started = Date.now();
      const answer = await xmlrpcPost(url, body);
      expect(Date.now() - started).to.be.below(FAST_MS);
      expect(answer.status === 413 || answer.fault?.faultCode === 40, JSON.stringify(answer)).to.equal(true);
      expect(answer.fault!.faultString).to.match(/nested deeper than 64 levels|exceeds \d+ bytes/);
      await stillServing();
    });
  });

  describe('struct members that name the prototype', () => {
    it('a member named __proto__ is an argument like any other: refused by name, not turned into the struct\'s prototype', async () => {
      // With `__proto__` as a plain assignment, { admin: true } would become the prototype of the
      // credentials struct and be read through it, while Object.entries would not see the member.
      const body = call(
        'registered_users',
        `${ADMIN_PARAM}<param><value><struct>` +
          '<member><name>__proto__</name><value><struct><member><name>host</name><value>localhost</value></member></struct></value></member>' +
          '</struct></value></param>',
      );
      const answer = await xmlrpcPost(url, body);
      expect(answer.fault, JSON.stringify(answer)).to.not.equal(undefined);
      expect(answer.fault!.faultString).to.match(/__proto__/);
    });

    it('a repeated __proto__ member is refused as a repeated member', async () => {
      const member = '<member><name>__proto__</name><value><struct></struct></value></member>';
      const answer = await xmlrpcPost(url, call('status', `<param><value><struct>${member}${member}</struct></value></param>`));
      expect(answer.fault?.faultString, JSON.stringify(answer)).to.match(/__proto__' appears twice/);
    });

    it('credentials inherited through __proto__ do not authenticate anyone', async () => {
      const body = call(
        'registered_users',
        '<param><value><struct>' +
          '<member><name>__proto__</name><value><struct>' +
          '<member><name>user</name><value>admin</value></member><member><name>server</name><value>localhost</value></member>' +
          '<member><name>password</name><value>adminpass</value></member><member><name>admin</name><value><boolean>1</boolean></value></member>' +
          '</struct></value></member>' +
          '</struct></value></param>' +
          '<param><value><struct><member><name>host</name><value>localhost</value></member></struct></value></param>',
      );
      const answer = await xmlrpcPost(url, body);
      expect(answer.result, 'the call ran as the administrator').to.equal(undefined);
      expect(answer.fault, JSON.stringify(answer)).to.not.equal(undefined);
    });
  });

  describe('JSON on /api', () => {
    it('an argument nested 100 000 levels deep is a 400 naming the argument, answered at once; /api still serves', async () => {
      const depth = 100_000;
      for (const raw of [`{"host": ${'['.repeat(depth)}${']'.repeat(depth)}}`, `{"host": "localhost", "extra": ${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`]) {
        const started = Date.now();
        const res = await t.api('registered_users', {}, { basic: ADMIN, raw });
        expect(Date.now() - started).to.be.below(FAST_MS);
        expect(res.status, res.text).to.equal(400);
        expect(res.body.message).to.match(/host|extra/);
      }
      const ok = await t.api('registered_users', { host: 'localhost' }, { basic: ADMIN });
      expect(ok.body).to.deep.equal(['admin', 'ann']);
    });

    it('a list argument nested deep inside (a list of lists of lists...) is a 400, not a stack overflow', async () => {
      const depth = 100_000;
      const raw = JSON.stringify({ user: 'ann', host: 'localhost', nick: 'x', group: 'g', subs: 'both' }).replace(/}$/, `, "groups": ${'['.repeat(depth)}${']'.repeat(depth)}}`);
      const res = await t.api('add_rosteritem', {}, { basic: ADMIN, raw });
      expect(res.status, res.text).to.be.within(400, 499);
      expect(res.status).to.not.equal(500);
    });

    it('a __proto__ key is an unknown argument, refused by name', async () => {
      const res = await t.api('registered_users', {}, { basic: ADMIN, raw: '{"__proto__": {"host": "localhost"}}' });
      expect(res.status, res.text).to.equal(400);
      expect(res.body.message).to.match(/__proto__/);
    });
  });
});
