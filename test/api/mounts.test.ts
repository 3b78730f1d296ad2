/**
 * How a service_http listener mounts its request_handlers (through @koa/router): by whole path segments,
 * case-sensitively, the longest prefix first, with percent-encoding checked.
 */
import { expect } from 'chai';
import { baseConfig, request, TestServer } from '../support/server.js';

describe('request_handlers mounts', () => {
  let t: TestServer;

  before(async () => {
    const config = baseConfig();
    (config.listen as any[])[0].request_handlers = { '/api': 'mod_http_api', '/api/v2': 'mod_http_api', '/a:b(c)': 'mod_http_api' };
    t = await TestServer.start(config);
  });
  after(() => t.stop());

  it('serves the prefix and what lies below it, not a longer name', async () => {
    expect((await request(t.url('/api/status'), { method: 'POST' })).status).to.equal(200);
    const apix = await request(t.url('/apix/status'), { method: 'POST' });
    expect(apix.status).to.equal(404);
    expect(apix.body.message).to.equal('nothing is served at /apix/status');
  });

  it('compares paths case-sensitively', async () => {
    expect((await request(t.url('/API/status'), { method: 'POST' })).status).to.equal(404);
  });

  it('takes the longest prefix: /api/v2 is its own mount, whose commands are version 2', async () => {
    const res = await request(t.url('/api/v2/status'), { method: 'POST' });
    expect(res.status, res.text).to.equal(200);
  });

  it('mounts a prefix with characters path patterns would read as syntax, literally', async () => {
    expect((await request(t.url('/a:b(c)/status'), { method: 'POST' })).status).to.equal(200);
    expect((await request(t.url('/aXb(c)/status'), { method: 'POST' })).status).to.equal(404);
  });

  it('keeps answering each path from its own mount after more distinct paths than it remembers, long ones too', async () => {
    // The listener remembers the mount of recent short paths (1 024, then starts again): asking for more paths
    // than that, mounted and not, long and short, must not move any of them to another mount.
    const answers = new Map<string, number>();
    for (let i = 0; i < 1100; i++) {
      const path = i % 2 ? `/apix/${i}` : `/api/v2/no_such_${i}`;
      answers.set(path, (await request(t.url(path), { method: 'POST' })).status);
    }
    expect(new Set([...answers].filter(([path]) => path.startsWith('/apix/')).map(([, status]) => status))).to.deep.equal(new Set([404]));
    const long = `/api/v2/status${'/x'.repeat(200)}`;
    for (const path of ['/api/status', '/api/v2/status', long, '/apix/status', long, '/api/v2/status']) {
      const res = await request(t.url(path), { method: 'POST' });
      const expected = path === '/apix/status' ? 'nothing is served at /apix/status' : undefined;
      if (expected) expect([res.status, res.body.message]).to.deep.equal([404, expected]);
      else if (path === long) expect([res.status, res.body.message?.slice(0, 22)], res.text).to.deep.equal([404, 'unknown command status']);
      else expect(res.status, `${path}: ${res.text}`).to.equal(200);
    }
  });

  it('refuses a path that is not valid percent-encoded UTF-8 with a 400 saying so', async () => {
    const res = await request(t.url('/api/st%E0tus'), { method: 'POST' });
    expect(res.status, res.text).to.equal(400);
    expect(res.body.message).to.equal('the URL path is not valid percent-encoded UTF-8');
  });
});
