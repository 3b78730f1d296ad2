/**
 * The documentation commands on a running server: gen_markdown_doc_for_commands, gen_markdown_doc_for_tags,
 * gen_html_doc_for_commands and man, over the HTTP API, with mod_fixture enabled and mod_fixture_dep
 * installed but not enabled.
 */
import { expect } from 'chai';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { baseConfig, TestServer } from '../support/server.js';

const ADMIN = 'admin@localhost:adminpass';

/** The code blocks of a markdown text with their info string. */
function codeBlocks(markdown: string): Array<{ syntax: string; code: string }> {
  return [...markdown.matchAll(/^(`{3,})(\w*)\n([\s\S]*?)\n\1$/gm)].map((m) => ({ syntax: m[2]!, code: m[3]! }));
}

/** The section of one command: from its heading to the next. */
function section(markdown: string, command: string): string {
  const start = markdown.indexOf(`\n## ${command}\n`);
  expect(start, `section ${command}`).to.be.greaterThan(-1);
  const next = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, next === -1 ? undefined : next);
}

/** Opening and closing tags nest properly (void elements aside). */
function expectBalancedHtml(html: string): void {
  const stack: string[] = [];
  for (const [, close, name] of html.matchAll(/<(\/?)([a-zA-Z][a-zA-Z0-9]*)\b[^>]*>/g)) {
    const tag = name!.toLowerCase();
    if (['meta', 'br', 'hr', 'img', 'link'].includes(tag)) continue;
    if (close) expect(stack.pop(), `</${tag}>`).to.equal(tag);
    else stack.push(tag);
  }
  expect(stack).to.deep.equal([]);
}

describe('documentation commands', () => {
  let t: TestServer;
  let dataDir: string;
  let loaded: string[];

  before(async () => {
    const config = baseConfig();
    config.modules = { mod_http_api: {}, mod_fixture: {} };
    t = await TestServer.start(config, { plugins: ['mod_fixture', 'mod_fixture_dep'] });
    await t.bootstrapAdmin();
    dataDir = t.server.services.config().dataDir;
    loaded = (await t.server.services.commandDocs({ runtimeOnly: true })).map((doc) => doc.decl.name);
    await mkdir(join(t.dir, 'out'));
  });
  after(() => t.stop());

  async function generate(command: string, args: Record<string, unknown>): Promise<string> {
    const res = await t.api(command, args, { basic: ADMIN });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.equal(0);
    return readFile(args.file as string, 'utf8');
  }

  describe('gen_markdown_doc_for_commands', () => {
    it('with runtime, documents every loaded command and nothing else', async () => {
      const markdown = await generate('gen_markdown_doc_for_commands', { file: join(t.dir, 'out', 'runtime.md'), regexp: 'runtime', examples: 'json' });
      const headings = [...markdown.matchAll(/^## (\S+)$/gm)].map((m) => m[1]).filter((h) => h !== 'Contents');
      expect(headings).to.deep.equal(loaded);
      expect(loaded).to.include.members(['fixture_echo', 'register', 'man']);
      expect(markdown).to.not.contain('fixture_dep_greet');
      expect(section(markdown, 'fixture_echo')).to.contain('- **Module:** mod_fixture (enabled)');
    });

    it('with a module name, documents that module only', async () => {
      const markdown = await generate('gen_markdown_doc_for_commands', { file: join(t.dir, 'out', 'dep.md'), regexp: '^mod_fixture_dep$', examples: '' });
      const headings = [...markdown.matchAll(/^## (\S+)$/gm)].map((m) => m[1]).filter((h) => h !== 'Contents');
      expect(headings).to.deep.equal(['fixture_dep_greet']);
      expect(section(markdown, 'fixture_dep_greet')).to.contain('mod_fixture_dep (not enabled: add it under `modules` in the configuration)');
      const fixture = await generate('gen_markdown_doc_for_commands', { file: join(t.dir, 'out', 'fixture.md'), regexp: '^mod_fixture$', examples: 'json' });
      const names = [...fixture.matchAll(/^## (\S+)$/gm)].map((m) => m[1]).filter((h) => h !== 'Contents');
      expect(names).to.include('fixture_echo');
      expect(names.every((name) => name!.startsWith('fixture_') && name !== 'fixture_dep_greet'), names.join()).to.equal(true);
    });

    it('shows the real HTTP exchange in json examples: the request body and the response /api gives', async () => {
      const markdown = await generate('gen_markdown_doc_for_commands', { file: join(t.dir, 'out', 'register.md'), regexp: '^register$', examples: 'json' });
      const blocks = codeBlocks(section(markdown, 'register'));
      expect(blocks.map((b) => b.syntax)).to.deep.equal(['sh', 'http']);
      expect(blocks[0]!.code).to.equal('$ servicectl register bob localhost SomEPass44\nUser bob@localhost successfully registered');
      const [request, response] = blocks[1]!.code.split('\n\nHTTP/1.1 ');
      expect(request!.split('\n').slice(0, 2)).to.deep.equal(['POST /api/register', 'Content-Type: application/json']);
      const body = JSON.parse(request!.split('\n\n')[1]!);
      expect(body).to.deep.equal({ user: 'bob', host: 'localhost', password: 'SomEPass44' });
      expect(response).to.equal('200 OK\nContent-Type: application/json\n\n"User bob@localhost successfully registered"');
      // Sent as documented, the request gets exactly the documented body.
      const res = await t.api('register', body, { basic: ADMIN });
      expect(res.status).to.equal(200);
      expect(res.text).to.equal(response!.split('\n\n')[1]);
    });

    it('includes the requested languages, in order', async () => {
      const markdown = await generate('gen_markdown_doc_for_commands', { file: join(t.dir, 'out', 'langs.md'), regexp: '^registered_users$', examples: 'xmlrpc,java,perl' });
      const blocks = codeBlocks(section(markdown, 'registered_users'));
      expect(blocks.map((b) => b.syntax)).to.deep.equal(['sh', 'xml', 'java', 'perl']);
      expect(blocks[1]!.code).to.contain('<methodName>registered_users</methodName>');
      expect(blocks[2]!.code).to.contain('client.execute("registered_users", new Object[] { args });');
      expect(blocks[3]!.code).to.contain("$client->send_request('registered_users', {");
    });

    it('writes a relative path under data_dir', async () => {
      await generate('gen_markdown_doc_for_commands', { file: join(dataDir, 'check.md'), regexp: 'runtime', examples: '' });
      const res = await t.api('gen_markdown_doc_for_commands', { file: 'relative.md', regexp: 'runtime', examples: '' }, { basic: ADMIN });
      expect(res.body).to.equal(0);
      expect(await readFile(join(dataDir, 'relative.md'), 'utf8')).to.equal(await readFile(join(dataDir, 'check.md'), 'utf8'));
    });

    it('refuses an unknown example language with 400, naming it', async () => {
      const res = await t.api('gen_markdown_doc_for_commands', { file: join(t.dir, 'out', 'x.md'), regexp: 'runtime', examples: 'json,cobol' }, { basic: ADMIN });
      expect(res.status).to.equal(400);
      expect(res.body.code).to.equal(41);
      expect(res.body.message).to.match(/unknown example language 'cobol'/);
    });

    it('refuses an invalid regexp, or one that matches nothing, with 400', async () => {
      const invalid = await t.api('gen_markdown_doc_for_commands', { file: join(t.dir, 'out', 'x.md'), regexp: 'fixture_(', examples: '' }, { basic: ADMIN });
      expect(invalid.status).to.equal(400);
      expect(invalid.body.message).to.match(/'regexp' is not a valid regular expression/);
      const none = await t.api('gen_markdown_doc_for_commands', { file: join(t.dir, 'out', 'x.md'), regexp: '^nothing_like_this$', examples: '' }, { basic: ADMIN });
      expect(none.status).to.equal(400);
      expect(none.body.message).to.match(/matches no command name nor module name/);
    });

    it('answers 422 naming the path and the reason when the file cannot be written', async () => {
      const missing = join(t.dir, 'no-such-dir', 'x.md');
      const res = await t.api('gen_markdown_doc_for_commands', { file: missing, regexp: 'runtime', examples: '' }, { basic: ADMIN });
      expect(res.status).to.equal(422);
      expect(res.body.code).to.equal(42);
      expect(res.body.message).to.equal(`cannot write ${missing}: ENOENT (the directory does not exist)`);
      const directory = await t.api('gen_markdown_doc_for_commands', { file: join(t.dir, 'out'), regexp: 'runtime', examples: '' }, { basic: ADMIN });
      expect(directory.status).to.equal(422);
      expect(directory.body.message).to.match(/EISDIR \(it is a directory\)$/);
    });
  });

  it('gen_markdown_doc_for_tags lists each tag with links to its commands', async () => {
    const markdown = await generate('gen_markdown_doc_for_tags', { file: join(t.dir, 'out', 'tags.md') });
    expect(markdown).to.match(/^# Commands by tag\n/);
    const accounts = markdown.split('\n## accounts\n')[1]!.split('\n## ')[0]!;
    expect(accounts).to.contain('- [register](commands.md#register): Register an account\n');
    const fixture = markdown.split('\n## fixture\n')[1]!.split('\n## ')[0]!;
    expect(fixture).to.contain('- [fixture_echo](commands.md#fixture_echo): Repeat a text\n');
    expect(fixture).to.contain('- [fixture_dep_greet](commands.md#fixture_dep_greet): Greeting through the dependency *(module mod_fixture_dep, not enabled)*');
    expect(markdown).to.not.match(/^## v2$/m);
    for (const name of loaded) expect(markdown, name).to.contain(`[${name}](commands.md#${name})`);
  });

  it('gen_html_doc_for_commands writes a standalone, escaped page with every command', async () => {
    const html = await generate('gen_html_doc_for_commands', { file: join(t.dir, 'out', 'commands.html'), regexp: 'runtime', examples: 'java,perl,xmlrpc,json' });
    expect(html).to.match(/^<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">/);
    expect(html.trimEnd().endsWith('</html>')).to.equal(true);
    for (const name of loaded) expect(html, name).to.contain(`<section id="${name}">\n<h2>${name}</h2>`);
    expect(html).to.not.contain('fixture_dep_greet');
    // Example XML and synopses are text, not markup.
    expect(html).to.contain('&lt;methodName&gt;register&lt;/methodName&gt;');
    expect(html).to.contain('<code>servicectl register &lt;user&gt; &lt;host&gt; &lt;password&gt;</code>');
    expect(html).to.not.contain('<methodCall>');
    expect(html).to.contain('<code class="language-http">POST /api/register\nContent-Type: application/json\n\n{\n  &quot;user&quot;: &quot;bob&quot;');
    expectBalancedHtml(html);
  });

  it('man returns the whole reference as text, every command included', async () => {
    const res = await t.api('man', {}, { basic: ADMIN });
    expect(res.status).to.equal(200);
    const text: string = res.body;
    expect(text).to.match(/^servicectl command reference\n\nCommands by tag:\n/);
    const known = (await t.server.services.commandDocs()).map((doc) => doc.decl.name);
    expect(known).to.include('fixture_dep_greet');
    for (const name of known) expect(text, name).to.contain(`\n${name}\n\nUsage: servicectl ${name}`);
    expect(text).to.match(/fixture_dep_greet +Greeting through the dependency {2}\(module mod_fixture_dep, not enabled\)/);
    expect(text).to.contain('  $ servicectl register bob localhost SomEPass44\n  User bob@localhost successfully registered\n');
  });
});
