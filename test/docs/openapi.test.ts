/**
 * The OpenAPI 3.1 description served by mod_http_api at /api and /api/openapi.json: valid, complete for the
 * loaded commands (and only them), and true to what /api does.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { expect } from 'chai';
import { baseConfig, request, TestServer } from '../support/server.js';

const ADMIN = 'admin@localhost:adminpass';

type Json = Record<string, any>;

async function validate(document: Json): Promise<void> {
  const validator = new Validator();
  const result = await validator.validate(document);
  expect(result.errors, JSON.stringify(result.errors, null, 2)).to.equal(undefined);
  expect(result.valid).to.equal(true);
  expect(validator.version).to.equal('3.1');
}

describe('OpenAPI description', () => {
  let t: TestServer;
  let document: Json;

  before(async () => {
    const config = baseConfig();
    config.modules = { mod_http_api: {}, mod_fixture: {} };
    // Installed, not enabled: its command must not be described.
    t = await TestServer.start(config, { plugins: ['mod_fixture', 'mod_fixture_dep'] });
    await t.bootstrapAdmin();
    const res = await request(t.url('/api'), { method: 'GET' });
    expect(res.status).to.equal(200);
    document = res.body;
  });
  after(() => t.stop());

  it('is served as JSON at /api and /api/openapi.json, without credentials', async () => {
    const res = await request(t.url('/api/openapi.json'), { method: 'GET' });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    expect(res.body).to.deep.equal(document);
    expect(document.openapi).to.equal('3.1.0');
    expect(document.servers).to.deep.equal([{ url: '/api' }]);
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    await validate(document);
  });

  it('has an operation for every loaded command that HTTP may call, and nothing else', async () => {
    const loaded = await t.server.services.commandDocs({ runtimeOnly: true });
    const callable = loaded.filter((doc) => !doc.decl.cliOnly).map((doc) => `/${doc.decl.name}`);
    expect(Object.keys(document.paths).sort()).to.deep.equal(callable.sort());
    for (const name of ['fixture_echo', 'fixture_types', 'fixture_version', 'register', 'man', 'gen_markdown_doc_for_commands']) {
      expect(document.paths[`/${name}`]?.post?.operationId, name).to.equal(name);
    }
    expect(document.paths).to.not.have.property('/fixture_dep_greet');
    const cliOnly = loaded.filter((doc) => doc.decl.cliOnly);
    expect(cliOnly, 'the kernel has command-line-only commands').to.not.be.empty;
    for (const doc of cliOnly) expect(document.paths).to.not.have.property(`/${doc.decl.name}`);
  });

  it('describes arguments as a closed JSON object, and the result', () => {
    const post = document.paths['/register'].post;
    expect(post.summary).to.equal('Register an account');
    expect(post.description).to.match(/^Creates the account `user@host`/);
    expect(post.tags).to.deep.equal(['accounts']);
    const body = post.requestBody.content['application/json'];
    expect(post.requestBody.required).to.equal(true);
    expect(body.schema.type).to.equal('object');
    expect(body.schema.required).to.deep.equal(['user', 'host', 'password']);
    expect(body.schema.additionalProperties).to.equal(false);
    expect(body.schema.properties.user).to.deep.equal({ type: 'string', description: 'User name (the local part of the JID)' });
    expect(body.examples.example1.value).to.deep.equal({ user: 'bob', host: 'localhost', password: 'SomEPass44' });
    const ok = post.responses['200'].content['application/json'];
    expect(ok.schema).to.deep.equal({ type: 'string' });
    expect(ok.examples.example1.value).to.equal('User bob@localhost successfully registered');
  });

  it('types integers, booleans, lists, pairs and objects', () => {
    const echo = document.paths['/fixture_echo'].post.requestBody.content['application/json'].schema;
    expect(echo.properties.times.type).to.equal('integer');
    expect(echo.properties.times.description).to.match(/numeric string/);
    const types = document.paths['/fixture_types'].post;
    const args = types.requestBody.content['application/json'].schema.properties;
    expect(args.names).to.deep.include({ type: 'array', items: { type: 'string' } });
    expect(args.options.oneOf[0]).to.deep.equal({
      type: 'array',
      items: { type: 'object', properties: { name: { type: 'string' }, value: { type: 'string' } }, required: ['name', 'value'], additionalProperties: false },
    });
    expect(args.options.oneOf[1]).to.deep.equal({ type: 'object', additionalProperties: { type: 'string' } });
    expect(args.flag.type).to.equal('boolean');
    expect(types.responses['200'].content['application/json'].schema).to.deep.equal({
      type: 'object',
      properties: { names: { type: 'array', items: { type: 'string' } }, pairs: { type: 'integer' }, flag: { type: 'boolean' } },
      required: ['names', 'pairs', 'flag'],
      additionalProperties: false,
    });
    expect(document.paths['/gc'].post.responses['200'].content['application/json'].schema).to.deep.include({ type: 'integer', enum: [0, 1] });
    expect(document.paths['/gc'].post.requestBody.required).to.equal(false);
  });

  it('shares one error envelope across the error statuses, and declares Basic and bearer', () => {
    const responses = document.paths['/register'].post.responses;
    for (const status of ['400', '401', '403', '404', '409', '413', '422', '500']) {
      expect(responses[status], status).to.deep.equal({ $ref: `#/components/responses/Error${status}` });
      expect(document.components.responses[`Error${status}`].content['application/json'].schema).to.deep.equal({ $ref: '#/components/schemas/ErrorEnvelope' });
    }
    expect(document.components.responses.Error404.description).to.match(/unknown_command \(code 44\)/);
    expect(document.components.schemas.ErrorEnvelope).to.deep.include({ required: ['status', 'code', 'message'], additionalProperties: false });
    expect(document.components.schemas.ErrorEnvelope.properties.code).to.deep.include({ type: 'integer' });
    expect(document.components.securitySchemes).to.deep.equal({
      basic: { type: 'http', scheme: 'basic', description: 'The account as user@host, and its password.' },
      bearer: { type: 'http', scheme: 'bearer', description: 'An OAuth access token.' },
    });
  });

  it('offers GET with query parameters only where every argument is a scalar', () => {
    expect(document.paths['/registered_users'].get.operationId).to.equal('registered_users_get');
    expect(document.paths['/registered_users'].get.parameters).to.deep.equal([
      { name: 'host', in: 'query', required: true, description: 'Local vhost', schema: { type: 'string' } },
    ]);
    expect(document.paths['/status']).to.have.property('get');
    expect(document.paths['/fixture_types']).to.not.have.property('get');
  });

  it('is true to /api: the documented example, sent to the documented path, gets the documented answer', async () => {
    const post = document.paths['/register'].post;
    const url = t.url(`${document.servers[0].url}/register`);
    const res = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(ADMIN).toString('base64')}` },
      body: JSON.stringify(post.requestBody.content['application/json'].examples.example1.value),
    });
    expect(res.status).to.equal(200);
    expect(res.body).to.equal(post.responses['200'].content['application/json'].examples.example1.value);
    const failure = await t.api('register', { user: 'bob', host: 'localhost', password: 'x' }, { basic: ADMIN });
    expect(failure.status).to.equal(409);
    expect(Object.keys(failure.body).sort()).to.deep.equal([...document.components.schemas.ErrorEnvelope.required].sort());
  });

  it('describes the definitions of an API version below a vN segment', async () => {
    const latest = document.paths['/fixture_version'].post.requestBody.content['application/json'].schema;
    expect(Object.keys(latest.properties)).to.deep.equal(['suffix']);
    const v1 = await request(t.url('/api/v1/openapi.json'), { method: 'GET' });
    expect(v1.status).to.equal(200);
    await validate(v1.body);
    expect(v1.body.servers).to.deep.equal([{ url: '/api/v1' }]);
    expect(v1.body.paths['/fixture_version'].post.summary).to.equal('Version 0');
    expect(v1.body.paths['/fixture_version'].post.requestBody.content['application/json'].schema.properties).to.deep.equal({});
    expect((await request(t.url('/api/v1'), { method: 'GET' })).body).to.deep.equal(v1.body);
  });

  it('follows the modules: a reload that enables mod_fixture_dep adds its command', async () => {
    const config = baseConfig();
    config.modules = { mod_http_api: {}, mod_fixture: {}, mod_fixture_dep: {} };
    await t.writeConfig(config);
    expect((await t.api('reload_config', {}, { basic: ADMIN })).status).to.equal(200);
    const res = await request(t.url('/api'), { method: 'GET' });
    expect(res.body.paths['/fixture_dep_greet'].post.summary).to.equal('Greeting through the dependency');
    await validate(res.body);
  });
});
