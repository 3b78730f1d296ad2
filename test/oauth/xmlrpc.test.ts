/**
 * The XML-RPC frontend over real HTTP: the own-data and administrator call forms with a token or a
 * password, results as a struct named after the result, and faults with stable codes for every error.
 */
import { expect } from 'chai';
import { parseElement } from '@service/plugin-api';
import { request, TestServer } from '../support/server.js';
import { oauthConfig } from '../support/oauth-config.js';
import { decodeXmlRpc, xmlrpcCall, xmlrpcPost, type XmlRpcValue } from '../support/xmlrpc.js';

describe('XML-RPC', () => {
  let t: TestServer;
  let url: string;

  const call = (method: string, ...params: XmlRpcValue[]) => xmlrpcCall(url, method, ...params);

  before(async () => {
    const config = oauthConfig();
    (config.listen as any[]).push({ port: 0, ip: '127.0.0.1', module: 'service_xmlrpc', max_body_size: 4096 });
    t = await TestServer.start(config);
    await t.bootstrapAdmin();
    for (const user of ['ann', 'ben']) await t.server.services.accounts.register(user, 'localhost', 'pw');
    url = `http://127.0.0.1:${t.server.portOf('service_xmlrpc')}/`;
  });
  after(() => t.stop());

  it('answers an anonymous loopback call allowed by api_permissions, in a struct named after the result', async () => {
    const res = await call('status');
    expect(res.contentType).to.match(/^text\/xml/);
    expect(res.result).to.deep.equal({ res: (await t.api('status')).body });
  });

  it('takes the administrator form: credentials with admin true, then the arguments', async () => {
    const res = await call('registered_users', { user: 'admin', server: 'localhost', password: 'adminpass', admin: true }, { host: 'localhost' });
    expect(res.result).to.deep.equal({ users: [{ username: 'admin' }, { username: 'ann' }, { username: 'ben' }] });
    const token = (await t.api('oauth_issue_token', { jid: 'admin@localhost', ttl: 60, scopes: ['service:admin'] }, { basic: 'admin@localhost:adminpass' })).body.token;
    const viaToken = await call('register', { user: 'admin', server: 'localhost', token, admin: true }, { user: 'cleo', host: 'localhost', password: 'pw' });
    expect(viaToken.result).to.deep.equal({ res: 'User cleo@localhost successfully registered' });
  });

  it('takes the own-data form: one struct of user, server, token and the arguments', async () => {
    const token = (await t.api('oauth_issue_token', { jid: 'ann@localhost', ttl: 60, scopes: ['service:user'] }, { basic: 'admin@localhost:adminpass' })).body.token;
    const res = await call('user_resources', { user: 'ann', server: 'localhost', token });
    expect(res.result).to.deep.equal({ resources: [] });
    const withPassword = await call('user_resources', { user: 'ann', server: 'localhost', password: 'pw' });
    expect(withPassword.fault?.faultCode).to.equal(32, 'api_permissions give ann nothing with a password');
  });

  it('refuses, in the own-data form, to act on another account', async () => {
    const token = (await t.api('oauth_issue_token', { jid: 'ann@localhost', ttl: 60, scopes: ['service:user'] }, { basic: 'admin@localhost:adminpass' })).body.token;
    const res = await call('user_resources', { user: 'ann', server: 'localhost', token }, { user: 'ben', host: 'localhost' });
    expect(res.fault?.faultCode).to.equal(32);
    expect(res.fault?.faultString).to.match(/own account \(ann@localhost\)/);
  });

  it('acts for another account with a service:admin token only when the admin flag is true', async () => {
    const token = (await t.api('oauth_issue_token', { jid: 'admin@localhost', ttl: 60, scopes: ['service:admin'] }, { basic: 'admin@localhost:adminpass' })).body.token;
    for (const credentials of <Array<Record<string, XmlRpcValue>>>[
      { user: 'admin', server: 'localhost', token },
      { user: 'admin', server: 'localhost', token, admin: false },
    ]) {
      const res = await call('user_resources', credentials, { user: 'ben', host: 'localhost' });
      expect(res.fault?.faultCode).to.equal(32);
      expect(res.fault?.faultString).to.match(/own account \(admin@localhost\)/);
    }
    const asAdmin = await call('user_resources', { user: 'admin', server: 'localhost', token, admin: true }, { user: 'ben', host: 'localhost' });
    expect(asAdmin.result).to.deep.equal({ resources: [] });
  });

  it('refuses a body that is not UTF-8 with a fault, changing nothing', async () => {
    const body = Buffer.concat([
      Buffer.from('<?xml version="1.0"?><methodCall><methodName>register</methodName><params><param><value><struct>'),
      Buffer.from('<member><name>user</name><value><string>bad'),
      Buffer.from([0xe9, 0xff]),
      Buffer.from('</string></value></member><member><name>host</name><value><string>localhost</string></value></member>'),
      Buffer.from('<member><name>password</name><value><string>pw</string></value></member></struct></value></param></params></methodCall>'),
    ]);
    const { fault } = await xmlrpcPost(url, body);
    expect(fault?.faultCode).to.equal(40);
    expect(fault?.faultString).to.equal('the request body is not valid UTF-8');
    const users: string[] = (await t.api('registered_users', { host: 'localhost' }, { basic: 'admin@localhost:adminpass' })).body;
    expect(users.filter((u) => u.startsWith('bad'))).to.deep.equal([]);
  });

  const faults: Array<[string, () => Promise<any>, number, RegExp]> = [
    ['an unknown command', () => call('no_such_command'), 44, /unknown command no_such_command/],
    ['a missing argument, named', () => call('registered_users', { user: 'admin', server: 'localhost', password: 'adminpass', admin: true }, {}), 41, /missing argument 'host'/],
    ['a wrong type, named', () => call('registered_users', { user: 'admin', server: 'localhost', password: 'adminpass', admin: true }, { host: 5 }), 41, /argument 'host' must be a string, got 5/],
    ['bad credentials', () => call('status', { user: 'admin', server: 'localhost', password: 'wrong', admin: true }, {}), 10, /invalid credentials/],
    ['a token of someone else', () => call('status', { user: 'ben', server: 'localhost', token: 'not-a-token' }), 10, /invalid or expired/],
    ['a denied command', () => call('registered_users', { host: 'localhost' }), 32, /not allowed/],
  ];
  for (const [what, run, code, message] of faults) {
    it(`answers ${what} with fault ${code}`, async () => {
      const res = await run();
      expect(res.status).to.equal(200);
      expect(res.fault?.faultCode).to.equal(code);
      expect(res.fault?.faultString).to.match(message);
    });
  }

  it('answers malformed XML, a non-call and a bare value with a fault naming the problem', async () => {
    for (const [body, pattern] of [
      ['<methodCall><methodName>status</methodName>', /^the request is not valid XML: the text ends before <methodCall> is closed$/],
      ['hello', /^the request is not valid XML: text is not allowed outside the element$/],
      ['<foo/>', /expected <methodCall>, got <foo>/],
      ['<methodCall><methodName>status</methodName><params><param><value><int>x</int></value></param></params></methodCall>', /not an integer/],
      ['<methodCall><methodName>status</methodName><params><param><value><string>a</string></value></param></params></methodCall>', /expected one struct/],
    ] as const) {
      const res = await request(url, { method: 'POST', body });
      const fault = decodeXmlRpc(parseElement(res.text).getChild('fault')!.getChild('value')!) as any;
      expect(fault.faultCode).to.be.oneOf([40]);
      expect(fault.faultString).to.match(pattern);
    }
  });

  it('takes POST only, and refuses a body over max_body_size with 413', async () => {
    const get = await request(url, { method: 'GET' });
    expect(get.status).to.equal(405);
    expect(get.headers.get('allow')).to.equal('POST');
    const big = await request(url, { method: 'POST', body: `<methodCall><methodName>status</methodName><params><param><value><string>${'x'.repeat(5000)}</string></value></param></params></methodCall>` });
    expect(big.status).to.equal(413);
    expect(big.text).to.include('<name>faultCode</name><value><int>13</int>');
  });
});
