/**
 * mod_admin_extra's vCard commands (get_vcard, set_vcard, get_vcard2, set_vcard2, get_vcard2_multi,
 * set_vcard2_multi, set_nickname) against real clients: what the API sets is the vCard a client fetches
 * over XMPP, what a client stored is what the API reads; absent fields; bad input refused with nothing
 * changed; servicectl and XML-RPC; storage on each database.
 */
import { expect } from 'chai';
import { servicectl } from '../support/cli.js';
import { testDatabases } from '../support/databases.js';
import { serverSqlConfig, TestServer, type RawConfig } from '../support/server.js';
import { login, stopAll, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';
import { xmlrpcAsAdmin } from '../support/xmlrpc.js';

const ADMIN = 'admin@localhost:adminpass';
const NS_VCARD = 'vcard-temp';
const MODULES = { mod_admin_extra: {}, mod_vcard: { max_size: 4096 } };

function config(modules: Record<string, unknown> = MODULES): RawConfig {
  const raw = xmppConfig(modules);
  (raw.listen as any[]).push({ port: 0, ip: '127.0.0.1', module: 'service_xmlrpc' });
  return raw;
}

/** The vCard of `jid` as a client gets it over XMPP (vcard-temp). */
async function fetchVcard(client: Client, jid: string): Promise<Element> {
  const answer = await client.iqCaller.request(xml('iq', { type: 'get', to: jid }, xml('vCard', { xmlns: NS_VCARD })));
  return answer.getChild('vCard', NS_VCARD)!;
}

async function storeOwnVcard(client: Client, vcard: Element): Promise<void> {
  await client.iqCaller.request(xml('iq', { type: 'set' }, vcard));
}

/** Each `name` entry of the vCard as its children's [name, text] pairs, in document order. */
function entryShapes(vcard: Element, name: string): Array<Array<[string, string]>> {
  return vcard.getChildren(name).map((entry) => entry.getChildElements().map((child): [string, string] => [child.name, child.text()]));
}

/** The TEL or EMAIL entries carrying `flag`, as [flags, value] pairs. */
function typedEntries(vcard: Element, name: 'TEL' | 'EMAIL', flag: string): string[] {
  const value = name === 'TEL' ? 'NUMBER' : 'USERID';
  return vcard
    .getChildren(name)
    .filter((entry) => entry.getChild(flag))
    .map((entry) => entry.getChildText(value)!);
}


describe('mod_admin_extra vCard commands', () => {
  let t: TestServer;
  let alice: Client;
  let bob: Client;
  const api = (command: string, args: Record<string, unknown>) => t.api(command, args, { basic: ADMIN });
  /** The body of a successful call; fails the test with the error otherwise. */
  const ok = async (command: string, args: Record<string, unknown>) => {
    const res = await api(command, args);
    expect(res.status, `${command}: ${res.text}`).to.equal(200);
    return res.body;
  };

  before(async () => {
    t = await TestServer.start(config());
    await t.bootstrapAdmin();
    for (const user of ['alice', 'bob', 'carol', 'dave', 'erin', 'fred']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    alice = await login(t, { user: 'alice', password: 'alice-pw', resource: 'desk' });
    bob = await login(t, { user: 'bob', password: 'bob-pw', resource: 'desk' });
  });
  after(async () => {
    await stopAll(alice, bob);
    await t.stop();
  });

  describe('what the API sets, a client fetching the vCard over XMPP sees', () => {
    it('set_vcard writes the single fields (FN, NICKNAME, BDAY, TITLE, ROLE…) and get_vcard reads them back', async () => {
      const fields = { FN: 'Carol Smith', NICKNAME: 'caz', BDAY: '1990-04-01', TITLE: 'Engineer', ROLE: 'Backend', URL: 'https://carol.example', DESC: 'Hello <world> & co' };
      for (const [name, content] of Object.entries(fields)) expect(await ok('set_vcard', { user: 'carol', host: 'localhost', name, content })).to.equal(0);

      const card = await fetchVcard(bob, 'carol@localhost');
      for (const [name, content] of Object.entries(fields)) expect(card.getChildText(name), name).to.equal(content);
      for (const [name, content] of Object.entries(fields)) expect(await ok('get_vcard', { user: 'carol', host: 'localhost', name }), name).to.equal(content);
      // Names are case-insensitive, as vCard names are.
      expect(await ok('get_vcard', { user: 'carol', host: 'localhost', name: 'fn' })).to.equal('Carol Smith');
    });

    it("set_vcard2 writes the spec's name/subname pairs as XEP-0054 structures", async () => {
      const pairs: Array<[string, string, string]> = [
        ['N', 'FAMILY', 'Smith'],
        ['N', 'GIVEN', 'Carol'],
        ['N', 'MIDDLE', 'Ann'],
        ['ADR', 'CTRY', 'Norway'],
        ['ADR', 'LOCALITY', 'Oslo'],
        ['TEL', 'HOME', '+47 100'],
        ['TEL', 'CELL', '+47 200'],
        ['TEL', 'WORK', '+47 300'],
        ['TEL', 'VOICE', '+47 400'],
        ['EMAIL', 'USERID', 'carol@example.com'],
        ['ORG', 'ORGNAME', 'Example Inc.'],
        ['ORG', 'ORGUNIT', 'Platform'],
      ];
      for (const [name, subname, content] of pairs) expect(await ok('set_vcard2', { user: 'carol', host: 'localhost', name, subname, content })).to.equal(0);

      const card = await fetchVcard(bob, 'carol@localhost');
      expect(card.getChildren('N')).to.have.length(1);
      expect(card.getChild('N')!.getChildText('FAMILY')).to.equal('Smith');
      expect(card.getChild('N')!.getChildText('GIVEN')).to.equal('Carol');
      expect(card.getChild('N')!.getChildText('MIDDLE')).to.equal('Ann');
      expect(card.getChild('ADR')!.getChildText('CTRY')).to.equal('Norway');
      expect(card.getChild('ADR')!.getChildText('LOCALITY')).to.equal('Oslo');
      // A TEL type is a flag; the number is in NUMBER, as XEP-0054 clients read it.
      expect(typedEntries(card, 'TEL', 'HOME')).to.deep.equal(['+47 100']);
      expect(typedEntries(card, 'TEL', 'CELL')).to.deep.equal(['+47 200']);
      expect(typedEntries(card, 'TEL', 'WORK')).to.deep.equal(['+47 300']);
      expect(typedEntries(card, 'TEL', 'VOICE')).to.deep.equal(['+47 400']);
      expect(card.getChild('EMAIL')!.getChildText('USERID')).to.equal('carol@example.com');
      expect(card.getChild('ORG')!.getChildText('ORGNAME')).to.equal('Example Inc.');
      expect(card.getChild('ORG')!.getChildText('ORGUNIT')).to.equal('Platform');
      // The single fields set before are still there.
      expect(card.getChildText('FN')).to.equal('Carol Smith');

      for (const [name, subname, content] of pairs) expect(await ok('get_vcard2', { user: 'carol', host: 'localhost', name, subname }), `${name} ${subname}`).to.equal(content);
    });

    it('set_vcard2_multi makes a subfield hold exactly the values, get_vcard2_multi reads them in order', async () => {
      expect(await ok('set_vcard2_multi', { user: 'dave', host: 'localhost', name: 'TEL', subname: 'HOME', contents: ['+1 555 0100', '+1 555 0101'] })).to.equal(0);
      expect(await ok('set_vcard2_multi', { user: 'dave', host: 'localhost', name: 'EMAIL', subname: 'USERID', contents: ['dave@example.com', 'd@example.org', 'dave@work.example'] })).to.equal(0);
      expect(await ok('set_vcard2_multi', { user: 'dave', host: 'localhost', name: 'TEL', subname: 'WORK', contents: ['+1 555 0199'] })).to.equal(0);

      let card = await fetchVcard(bob, 'dave@localhost');
      expect(typedEntries(card, 'TEL', 'HOME')).to.deep.equal(['+1 555 0100', '+1 555 0101']);
      expect(typedEntries(card, 'TEL', 'WORK')).to.deep.equal(['+1 555 0199']);
      expect(card.getChildren('EMAIL').map((e) => e.getChildText('USERID'))).to.deep.equal(['dave@example.com', 'd@example.org', 'dave@work.example']);
      expect(await ok('get_vcard2_multi', { user: 'dave', host: 'localhost', name: 'TEL', subname: 'HOME' })).to.deep.equal(['+1 555 0100', '+1 555 0101']);
      expect(await ok('get_vcard2_multi', { user: 'dave', host: 'localhost', name: 'email', subname: 'userid' })).to.deep.equal(['dave@example.com', 'd@example.org', 'dave@work.example']);
      // get_vcard2 reads the first of several.
      expect(await ok('get_vcard2', { user: 'dave', host: 'localhost', name: 'TEL', subname: 'HOME' })).to.equal('+1 555 0100');

      // Fewer values replace them all; empty strings are left out; an empty list removes the subfield.
      expect(await ok('set_vcard2_multi', { user: 'dave', host: 'localhost', name: 'TEL', subname: 'HOME', contents: ['', '+1 555 0102'] })).to.equal(0);
      expect(await ok('set_vcard2_multi', { user: 'dave', host: 'localhost', name: 'EMAIL', subname: 'USERID', contents: [] })).to.equal(0);
      card = await fetchVcard(bob, 'dave@localhost');
      expect(typedEntries(card, 'TEL', 'HOME')).to.deep.equal(['+1 555 0102']);
      expect(typedEntries(card, 'TEL', 'WORK')).to.deep.equal(['+1 555 0199']);
      expect(card.getChildren('EMAIL')).to.have.length(0);
      expect(await ok('get_vcard2_multi', { user: 'dave', host: 'localhost', name: 'EMAIL', subname: 'USERID' })).to.deep.equal([]);
    });

    it('set_nickname sets NICKNAME and keeps the rest of the vCard', async () => {
      expect(await ok('set_nickname', { user: 'carol', host: 'localhost', nickname: 'Caro ✓' })).to.equal(0);
      const card = await fetchVcard(bob, 'carol@localhost');
      expect(card.getChildText('NICKNAME')).to.equal('Caro ✓');
      expect(card.getChildren('NICKNAME')).to.have.length(1);
      expect(card.getChildText('FN')).to.equal('Carol Smith');
      expect(card.getChild('N')!.getChildText('FAMILY')).to.equal('Smith');
      expect(await ok('get_vcard', { user: 'carol', host: 'localhost', name: 'NICKNAME' })).to.equal('Caro ✓');
    });

    it('an empty content removes the field, so clients see no empty element', async () => {
      expect(await ok('set_vcard', { user: 'carol', host: 'localhost', name: 'ROLE', content: '' })).to.equal(0);
      expect(await ok('set_vcard2', { user: 'carol', host: 'localhost', name: 'N', subname: 'MIDDLE', content: '' })).to.equal(0);
      const card = await fetchVcard(bob, 'carol@localhost');
      expect(card.getChild('ROLE')).to.equal(undefined);
      expect(card.getChild('N')!.getChild('MIDDLE')).to.equal(undefined);
      expect(card.getChild('N')!.getChildText('GIVEN')).to.equal('Carol');
      expect(await ok('get_vcard', { user: 'carol', host: 'localhost', name: 'ROLE' })).to.equal('');
    });

    it('keeps every field when a script sets many of them at once', async () => {
      const names = ['FN', 'NICKNAME', 'BDAY', 'TITLE', 'ROLE', 'URL', 'DESC', 'NOTE', 'TZ', 'MAILER'];
      const answers = await Promise.all(names.map((name) => api('set_vcard', { user: 'erin', host: 'localhost', name, content: `erin ${name}` })));
      expect(answers.map((a) => a.status)).to.deep.equal(names.map(() => 200));
      const card = await fetchVcard(bob, 'erin@localhost');
      for (const name of names) expect(card.getChildText(name), name).to.equal(`erin ${name}`);
    });
  });

  describe('what a client stored, the API reads and keeps', () => {
    before(async () => {
      await storeOwnVcard(
        alice,
        xml(
          'vCard',
          { xmlns: NS_VCARD },
          xml('FN', {}, 'Alice Liddell'),
          xml('N', {}, xml('FAMILY', {}, 'Liddell'), xml('GIVEN', {}, 'Alice')),
          xml('PHOTO', {}, xml('TYPE', {}, 'image/png'), xml('BINVAL', {}, 'iVBORw0KGgo=')),
          xml('TEL', {}, xml('HOME'), xml('VOICE'), xml('NUMBER', {}, '111')),
          xml('TEL', {}, xml('WORK'), xml('NUMBER', {}, '222')),
          xml('TEL', {}, xml('HOME'), xml('NUMBER', {}, '333')),
          xml('EMAIL', {}, xml('INTERNET'), xml('PREF'), xml('USERID', {}, 'alice@example.org')),
          xml('ORG', {}, xml('ORGNAME', {}, 'Wonderland')),
        ),
      );
    });

    it('reads single fields, parts and typed entries of a vCard a client stored', async () => {
      expect(await ok('get_vcard', { user: 'alice', host: 'localhost', name: 'FN' })).to.equal('Alice Liddell');
      expect(await ok('get_vcard2', { user: 'alice', host: 'localhost', name: 'N', subname: 'GIVEN' })).to.equal('Alice');
      expect(await ok('get_vcard2', { user: 'alice', host: 'localhost', name: 'PHOTO', subname: 'TYPE' })).to.equal('image/png');
      expect(await ok('get_vcard2', { user: 'alice', host: 'localhost', name: 'TEL', subname: 'WORK' })).to.equal('222');
      expect(await ok('get_vcard2_multi', { user: 'alice', host: 'localhost', name: 'TEL', subname: 'HOME' })).to.deep.equal(['111', '333']);
      expect(await ok('get_vcard2_multi', { user: 'alice', host: 'localhost', name: 'TEL', subname: 'NUMBER' })).to.deep.equal(['111', '222', '333']);
      expect(await ok('get_vcard2', { user: 'alice', host: 'localhost', name: 'EMAIL', subname: 'USERID' })).to.equal('alice@example.org');
      expect(await ok('get_vcard2', { user: 'alice', host: 'localhost', name: 'ORG', subname: 'ORGNAME' })).to.equal('Wonderland');
    });

    it('changes one field and keeps everything else the client stored', async () => {
      expect(await ok('set_vcard2', { user: 'alice', host: 'localhost', name: 'TEL', subname: 'WORK', content: '999' })).to.equal(0);
      const card = await fetchVcard(alice, 'alice@localhost');
      expect(typedEntries(card, 'TEL', 'WORK')).to.deep.equal(['999']);
      expect(typedEntries(card, 'TEL', 'HOME')).to.deep.equal(['111', '333']);
      expect(card.getChild('PHOTO')!.getChildText('BINVAL')).to.equal('iVBORw0KGgo=');
      expect(card.getChild('EMAIL')!.getChild('PREF')).to.not.equal(undefined);
      expect(card.getChildText('FN')).to.equal('Alice Liddell');
    });
  });

  describe('subfields that repeat inside one entry (ORG ORGUNIT, CATEGORIES KEYWORD, LABEL LINE)', () => {
    // XEP-0054: <!ELEMENT ORG (ORGNAME, ORGUNIT*)>, CATEGORIES (KEYWORD+), LABEL (…, LINE+). The units of an
    // organization are children of the one ORG that names it; a second ORG is another organization.
    let gina: Client;
    before(async () => {
      for (const user of ['gina', 'hank']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
      gina = await login(t, { user: 'gina', password: 'gina-pw', resource: 'desk' });
      await storeOwnVcard(
        gina,
        xml(
          'vCard',
          { xmlns: NS_VCARD },
          xml('FN', {}, 'Gina'),
          xml('ORG', {}, xml('ORGNAME', {}, 'Acme'), xml('ORGUNIT', {}, 'R&D'), xml('ORGUNIT', {}, 'Lab 7')),
          xml('ORG', {}, xml('ORGNAME', {}, 'Side Gig'), xml('ORGUNIT', {}, 'Nights')),
          xml('CATEGORIES', {}, xml('KEYWORD', {}, 'xmpp'), xml('KEYWORD', {}, 'chess')),
        ),
      );
    });
    after(() => stopAll(gina));
    const gv = (command: string, name: string, subname: string, more: Record<string, unknown> = {}) => ok(command, { user: 'gina', host: 'localhost', name, subname, ...more });

    it('get_vcard2_multi reads every unit of the first ORG, get_vcard2 the first one; ORGNAME is read per ORG', async () => {
      expect(await gv('get_vcard2_multi', 'ORG', 'ORGUNIT')).to.deep.equal(['R&D', 'Lab 7']);
      expect(await gv('get_vcard2', 'ORG', 'ORGUNIT')).to.equal('R&D');
      expect(await gv('get_vcard2_multi', 'ORG', 'ORGNAME')).to.deep.equal(['Acme', 'Side Gig']);
      expect(await gv('get_vcard2_multi', 'CATEGORIES', 'KEYWORD')).to.deep.equal(['xmpp', 'chess']);
    });

    it('set_vcard2_multi writes the units inside that ORG, after its ORGNAME, replacing exactly the old ones', async () => {
      expect(await gv('set_vcard2_multi', 'ORG', 'ORGUNIT', { contents: ['R&D', 'Lab 7', 'Lab 9'] })).to.equal(0);
      let card = await fetchVcard(bob, 'gina@localhost');
      expect(entryShapes(card, 'ORG')).to.deep.equal([
        [['ORGNAME', 'Acme'], ['ORGUNIT', 'R&D'], ['ORGUNIT', 'Lab 7'], ['ORGUNIT', 'Lab 9']],
        [['ORGNAME', 'Side Gig'], ['ORGUNIT', 'Nights']],
      ]);
      expect(await gv('get_vcard2_multi', 'ORG', 'ORGUNIT')).to.deep.equal(['R&D', 'Lab 7', 'Lab 9']);

      // Fewer values: the others are gone, not left behind for clients while the API no longer shows them.
      expect(await gv('set_vcard2_multi', 'ORG', 'ORGUNIT', { contents: ['Only'] })).to.equal(0);
      card = await fetchVcard(bob, 'gina@localhost');
      expect(entryShapes(card, 'ORG')[0]).to.deep.equal([['ORGNAME', 'Acme'], ['ORGUNIT', 'Only']]);
      expect(entryShapes(card, 'ORG')[1]).to.deep.equal([['ORGNAME', 'Side Gig'], ['ORGUNIT', 'Nights']]);
      expect(card.getChildText('FN')).to.equal('Gina');
    });

    it('set_vcard2 replaces every unit of the first ORG with its one value, as ejabberd does', async () => {
      expect(await gv('set_vcard2_multi', 'ORG', 'ORGUNIT', { contents: ['A', 'B'] })).to.equal(0);
      expect(await gv('set_vcard2', 'ORG', 'ORGUNIT', { content: 'Single' })).to.equal(0);
      const card = await fetchVcard(bob, 'gina@localhost');
      expect(entryShapes(card, 'ORG')[0]).to.deep.equal([['ORGNAME', 'Acme'], ['ORGUNIT', 'Single']]);
      expect(await gv('get_vcard2_multi', 'ORG', 'ORGUNIT')).to.deep.equal(['Single']);
    });

    it('an empty list removes the units and keeps the ORG with its name', async () => {
      expect(await gv('set_vcard2_multi', 'ORG', 'ORGUNIT', { contents: [] })).to.equal(0);
      const card = await fetchVcard(bob, 'gina@localhost');
      expect(entryShapes(card, 'ORG')).to.deep.equal([[['ORGNAME', 'Acme']], [['ORGNAME', 'Side Gig'], ['ORGUNIT', 'Nights']]]);
      expect(await gv('get_vcard2_multi', 'ORG', 'ORGUNIT')).to.deep.equal([]);
    });

    it('CATEGORIES KEYWORD and LABEL LINE stay in one entry as well', async () => {
      expect(await gv('set_vcard2_multi', 'CATEGORIES', 'KEYWORD', { contents: ['go', 'xmpp', 'tea'] })).to.equal(0);
      expect(await gv('set_vcard2_multi', 'LABEL', 'LINE', { contents: ['1 Main Street', 'Springfield'] })).to.equal(0);
      const card = await fetchVcard(bob, 'gina@localhost');
      expect(entryShapes(card, 'CATEGORIES')).to.deep.equal([[['KEYWORD', 'go'], ['KEYWORD', 'xmpp'], ['KEYWORD', 'tea']]]);
      expect(entryShapes(card, 'LABEL')).to.deep.equal([[['LINE', '1 Main Street'], ['LINE', 'Springfield']]]);
      expect(await gv('get_vcard2_multi', 'LABEL', 'LINE')).to.deep.equal(['1 Main Street', 'Springfield']);
      expect(await gv('set_vcard2_multi', 'CATEGORIES', 'KEYWORD', { contents: [] })).to.equal(0);
      expect((await fetchVcard(bob, 'gina@localhost')).getChildren('CATEGORIES')).to.have.length(0);
    });

    it('units written to a vCard without an ORG make one ORG with an ORGNAME first, as XEP-0054 requires', async () => {
      const hv = (command: string, subname: string, more: Record<string, unknown> = {}) => ok(command, { user: 'hank', host: 'localhost', name: 'ORG', subname, ...more });
      expect(await hv('set_vcard2_multi', 'ORGUNIT', { contents: ['Tools', 'Hammers'] })).to.equal(0);
      let card = await fetchVcard(bob, 'hank@localhost');
      expect(entryShapes(card, 'ORG')).to.deep.equal([[['ORGNAME', ''], ['ORGUNIT', 'Tools'], ['ORGUNIT', 'Hammers']]]);
      // The empty ORGNAME stands for "no name": it is not a value.
      expect(await hv('get_vcard2_multi', 'ORGNAME')).to.deep.equal([]);
      expect(await hv('get_vcard2', 'ORGNAME')).to.equal('');

      expect(await hv('set_vcard2', 'ORGNAME', { content: 'BuildCo' })).to.equal(0);
      card = await fetchVcard(bob, 'hank@localhost');
      expect(entryShapes(card, 'ORG')).to.deep.equal([[['ORGNAME', 'BuildCo'], ['ORGUNIT', 'Tools'], ['ORGUNIT', 'Hammers']]]);

      // Removing the name keeps the units, and the ORG keeps the ORGNAME it must have.
      expect(await hv('set_vcard2', 'ORGNAME', { content: '' })).to.equal(0);
      card = await fetchVcard(bob, 'hank@localhost');
      expect(entryShapes(card, 'ORG')).to.deep.equal([[['ORGNAME', ''], ['ORGUNIT', 'Tools'], ['ORGUNIT', 'Hammers']]]);

      // With neither, the ORG goes.
      expect(await hv('set_vcard2_multi', 'ORGUNIT', { contents: [] })).to.equal(0);
      expect((await fetchVcard(bob, 'hank@localhost')).getChildren('ORG')).to.have.length(0);
    });

    it('a client ORG without an ORGNAME gets it first when the API writes the name or the units', async () => {
      await storeOwnVcard(gina, xml('vCard', { xmlns: NS_VCARD }, xml('ORG', {}, xml('ORGUNIT', {}, 'Loose'))));
      expect(await gv('set_vcard2_multi', 'ORG', 'ORGUNIT', { contents: ['Tight', 'Firm'] })).to.equal(0);
      expect(entryShapes(await fetchVcard(bob, 'gina@localhost'), 'ORG')).to.deep.equal([[['ORGNAME', ''], ['ORGUNIT', 'Tight'], ['ORGUNIT', 'Firm']]]);
      await storeOwnVcard(gina, xml('vCard', { xmlns: NS_VCARD }, xml('ORG', {}, xml('ORGUNIT', {}, 'Loose'))));
      expect(await gv('set_vcard2', 'ORG', 'ORGNAME', { content: 'Named' })).to.equal(0);
      expect(entryShapes(await fetchVcard(bob, 'gina@localhost'), 'ORG')).to.deep.equal([[['ORGNAME', 'Named'], ['ORGUNIT', 'Loose']]]);
    });
  });

  describe('absent fields read as empty', () => {
    it('answers "" and [] for an account without a vCard', async () => {
      expect(await ok('get_vcard', { user: 'fred', host: 'localhost', name: 'FN' })).to.equal('');
      expect(await ok('get_vcard2', { user: 'fred', host: 'localhost', name: 'N', subname: 'FAMILY' })).to.equal('');
      expect(await ok('get_vcard2_multi', { user: 'fred', host: 'localhost', name: 'TEL', subname: 'HOME' })).to.deep.equal([]);
    });

    it('answers "" and [] for a field the vCard does not have', async () => {
      expect(await ok('get_vcard', { user: 'alice', host: 'localhost', name: 'BDAY' })).to.equal('');
      expect(await ok('get_vcard2', { user: 'alice', host: 'localhost', name: 'ADR', subname: 'CTRY' })).to.equal('');
      expect(await ok('get_vcard2_multi', { user: 'alice', host: 'localhost', name: 'TEL', subname: 'CELL' })).to.deep.equal([]);
    });
  });

  describe('bad input is refused, naming the problem, and changes nothing', () => {
    /** Alice's vCard as a client sees it, to compare before and after a refused call. */
    const aliceCard = async () => (await fetchVcard(bob, 'alice@localhost')).toString();

    it('answers 404 naming an account that does not exist, for reads and writes, and stores nothing for it', async () => {
      const calls: Array<[string, Record<string, unknown>]> = [
        ['get_vcard', { name: 'FN' }],
        ['get_vcard2', { name: 'N', subname: 'FAMILY' }],
        ['get_vcard2_multi', { name: 'TEL', subname: 'HOME' }],
        ['set_vcard', { name: 'FN', content: 'Ghost' }],
        ['set_vcard2', { name: 'N', subname: 'FAMILY', content: 'Ghost' }],
        ['set_vcard2_multi', { name: 'TEL', subname: 'HOME', contents: ['1'] }],
        ['set_nickname', { nickname: 'ghost' }],
      ];
      for (const [command, args] of calls) {
        const res = await api(command, { user: 'ghost', host: 'localhost', ...args });
        expect(res.status, command).to.equal(404);
        expect(res.body.message, command).to.equal('account ghost@localhost does not exist');
      }
      // Registered afterwards, the account starts with no vCard: nothing was stored under its name.
      await t.server.services.accounts.register('ghost', 'localhost', 'ghost-pw');
      try {
        expect((await fetchVcard(bob, 'ghost@localhost')).getChildElements()).to.have.length(0);
      } finally {
        await t.server.services.accounts.unregister('ghost', 'localhost');
      }
    });

    it('answers 400 naming a host this server does not serve, or a user name that cannot be a JID', async () => {
      const res = await api('get_vcard', { user: 'alice', host: 'elsewhere.example', name: 'FN' });
      expect(res.status).to.equal(400);
      expect(res.body.message).to.match(/unknown virtual host 'elsewhere\.example'/);
      const set = await api('set_vcard', { user: 'al ice', host: 'localhost', name: 'FN', content: 'x' });
      expect(set.status).to.equal(400);
      expect(set.body.message).to.match(/user|local part|al ice/i);
    });

    it('refuses a name that is not a vCard field, with the likely one', async () => {
      const before = await aliceCard();
      const typo = await api('set_vcard', { user: 'alice', host: 'localhost', name: 'NICKNAM', content: 'x' });
      expect(typo.status).to.equal(400);
      expect(typo.body.message).to.match(/'NICKNAM' is not a vCard field name \(XEP-0054\); did you mean NICKNAME\?/);
      const markup = await api('set_vcard', { user: 'alice', host: 'localhost', name: '<FN>', content: 'x' });
      expect(markup.status).to.equal(400);
      expect(markup.body.message).to.match(/not a vCard field name/);
      const unknown = await api('get_vcard', { user: 'alice', host: 'localhost', name: 'FOO' });
      expect(unknown.status).to.equal(400);
      expect(unknown.body.message).to.match(/^argument 'name': 'FOO' is not a vCard field name \(XEP-0054\)\. Single fields: FN, NICKNAME, BDAY, TITLE, ROLE, .*\. Structured fields \(with a subname\): N, ADR, LABEL, TEL, EMAIL, ORG, /);
      expect(await aliceCard()).to.equal(before);
    });

    it('points a structured field to the *_vcard2 commands, and a single field to get_vcard/set_vcard', async () => {
      const before = await aliceCard();
      const structured = await api('set_vcard', { user: 'alice', host: 'localhost', name: 'N', content: 'Alice' });
      expect(structured.status).to.equal(400);
      expect(structured.body.message).to.equal("argument 'name': N is a structured field: use set_vcard2 with a subname (FAMILY, GIVEN, MIDDLE, PREFIX, SUFFIX)");
      const read = await api('get_vcard', { user: 'alice', host: 'localhost', name: 'TEL' });
      expect(read.body.message).to.match(/^argument 'name': TEL is a structured field: use get_vcard2 with a subname \(NUMBER, HOME/);
      const single = await api('get_vcard2_multi', { user: 'alice', host: 'localhost', name: 'FN', subname: 'X' });
      expect(single.status).to.equal(400);
      expect(single.body.message).to.equal("argument 'name': FN holds a single value and has no parts: use get_vcard");
      const part = await api('set_vcard2', { user: 'alice', host: 'localhost', name: 'N', subname: 'FAMLY', content: 'x' });
      expect(part.status).to.equal(400);
      expect(part.body.message).to.equal("argument 'subname': 'FAMLY' is not a part of N; did you mean FAMILY? The parts of N are FAMILY, GIVEN, MIDDLE, PREFIX, SUFFIX");
      // ADR's type flags hold no text: writing one would make a vCard clients cannot read.
      expect((await api('set_vcard2', { user: 'alice', host: 'localhost', name: 'ADR', subname: 'HOME', content: 'x' })).status).to.equal(400);
      expect(await aliceCard()).to.equal(before);
    });

    it('refuses a value holding a character XML cannot carry, naming the argument', async () => {
      const before = await aliceCard();
      const res = await api('set_vcard', { user: 'alice', host: 'localhost', name: 'FN', content: 'bell\u0007' });
      expect(res.status).to.equal(400);
      expect(res.body.message).to.equal("argument 'content' holds U+0007 at position 4, a character XML cannot carry");
      const multi = await api('set_vcard2_multi', { user: 'alice', host: 'localhost', name: 'TEL', subname: 'HOME', contents: ['1', '\u0000'] });
      expect(multi.status).to.equal(400);
      expect(multi.body.message).to.match(/^argument 'contents' holds U\+0000/);
      const nick = await api('set_nickname', { user: 'alice', host: 'localhost', nickname: 'half \uD800' });
      expect(nick.status).to.equal(400);
      expect(nick.body.message).to.match(/^argument 'nickname' holds U\+D800/);
      expect(await aliceCard()).to.equal(before);
    });

    it("refuses a value that would make the vCard exceed mod_vcard's max_size", async () => {
      const before = await aliceCard();
      const res = await api('set_vcard', { user: 'alice', host: 'localhost', name: 'DESC', content: 'x'.repeat(5000) });
      expect(res.status).to.equal(400);
      expect(res.body.message).to.match(/^argument 'content': the vCard of alice@localhost cannot take this content: the vCard takes \d+ bytes, the limit is 4096$/);
      expect(await aliceCard()).to.equal(before);
    });

    it('refuses missing and wrongly typed arguments', async () => {
      const missing = await api('set_vcard2', { user: 'alice', host: 'localhost', name: 'N', subname: 'GIVEN' });
      expect(missing.status).to.equal(400);
      expect(missing.body.message).to.match(/missing argument 'content'/);
      const notList = await api('set_vcard2_multi', { user: 'alice', host: 'localhost', name: 'TEL', subname: 'HOME', contents: '123' });
      expect(notList.status).to.equal(400);
      expect(notList.body.message).to.match(/argument 'contents' must be a list of string/);
    });
  });

  describe('servicectl and XML-RPC', () => {
    const ctl = (...args: string[]) => servicectl(t.configFile, ...args);

    it('servicectl sets and reads fields, the list as the remaining words, and fails with the reason', async () => {
      expect(await ctl('set_vcard', 'bob', 'localhost', 'FN', 'Bob Builder')).to.deep.include({ code: 0, stdout: '' });
      expect(await ctl('set_vcard2_multi', 'bob', 'localhost', 'TEL', 'CELL', '+44 1', '+44 2')).to.deep.include({ code: 0, stdout: '' });
      expect((await ctl('get_vcard', 'bob', 'localhost', 'FN')).stdout).to.equal('Bob Builder\n');
      expect((await ctl('get_vcard2_multi', 'bob', 'localhost', 'TEL', 'CELL')).stdout).to.equal('+44 1\n+44 2\n');
      const card = await fetchVcard(alice, 'bob@localhost');
      expect(typedEntries(card, 'TEL', 'CELL')).to.deep.equal(['+44 1', '+44 2']);

      const missing = await ctl('get_vcard', 'ghost', 'localhost', 'FN');
      expect(missing.code).to.equal(1);
      expect(missing.stderr).to.contain('account ghost@localhost does not exist');
    });

    it('XML-RPC sets and reads fields, lists as ejabberd encodes them, and faults for a missing account', async () => {
      expect((await xmlrpcAsAdmin(t, 'set_nickname', { user: 'bob', host: 'localhost', nickname: 'bobby' })).result).to.deep.equal({ res: 0 });
      expect((await xmlrpcAsAdmin(t, 'get_vcard', { user: 'bob', host: 'localhost', name: 'NICKNAME' })).result).to.deep.equal({ content: 'bobby' });
      expect((await xmlrpcAsAdmin(t, 'set_vcard2_multi', { user: 'bob', host: 'localhost', name: 'EMAIL', subname: 'USERID', contents: [{ value: 'b@example.com' }, { value: 'bob@example.net' }] })).result).to.deep.equal({ res: 0 });
      expect((await xmlrpcAsAdmin(t, 'get_vcard2_multi', { user: 'bob', host: 'localhost', name: 'EMAIL', subname: 'USERID' })).result).to.deep.equal({
        contents: [{ value: 'b@example.com' }, { value: 'bob@example.net' }],
      });
      expect((await fetchVcard(alice, 'bob@localhost')).getChildText('NICKNAME')).to.equal('bobby');
      const fault = (await xmlrpcAsAdmin(t, 'get_vcard2', { user: 'ghost', host: 'localhost', name: 'N', subname: 'GIVEN' })).fault;
      expect(fault).to.deep.equal({ faultCode: 45, faultString: 'account ghost@localhost does not exist' });
    });
  });
});

describe('mod_admin_extra vCard commands without mod_vcard', () => {
  let t: TestServer;

  before(async () => {
    t = await TestServer.start(config({ mod_admin_extra: {} }));
    await t.bootstrapAdmin();
  });
  after(() => t.stop());

  it('fail with 422 saying which module to enable', async () => {
    const res = await t.api('get_vcard', { user: 'admin', host: 'localhost', name: 'FN' }, { basic: ADMIN });
    expect(res.status).to.equal(422);
    expect(res.body.message).to.equal('get_vcard needs mod_vcard, which is not enabled: add it to modules');
    const set = await t.api('set_nickname', { user: 'admin', host: 'localhost', nickname: 'x' }, { basic: ADMIN });
    expect(set.body.message).to.equal('set_nickname needs mod_vcard, which is not enabled: add it to modules');
  });
});

for (const database of testDatabases()) {
  describe(`mod_admin_extra vCard commands on ${database.name}`, () => {
    let t: TestServer;

    before(async () => {
      const settings = await database.settings('/tmp');
      const raw = { ...config(), ...serverSqlConfig(settings) };
      t = await TestServer.start(raw);
      await t.bootstrapAdmin();
      for (const user of ['alice', 'bob']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    });
    after(async () => {
      await t?.stop();
      await database.cleanup();
    });

    it('stores what the commands set, non-ASCII included, for the API and for clients', async () => {
      const api = (command: string, args: Record<string, unknown>) => t.api(command, args, { basic: ADMIN });
      expect((await api('set_vcard', { user: 'alice', host: 'localhost', name: 'FN', content: 'Ålice Ünïcode ✓ 😀' })).body).to.equal(0);
      expect((await api('set_vcard2_multi', { user: 'alice', host: 'localhost', name: 'TEL', subname: 'HOME', contents: ['١٢٣', '+47 22'] })).body).to.equal(0);
      expect((await api('set_nickname', { user: 'alice', host: 'localhost', nickname: 'ali' })).body).to.equal(0);
      expect((await api('set_nickname', { user: 'alice', host: 'localhost', nickname: 'ålï' })).body).to.equal(0);
      expect((await api('get_vcard', { user: 'alice', host: 'localhost', name: 'FN' })).body).to.equal('Ålice Ünïcode ✓ 😀');
      expect((await api('get_vcard2_multi', { user: 'alice', host: 'localhost', name: 'TEL', subname: 'HOME' })).body).to.deep.equal(['١٢٣', '+47 22']);
      const bob = await login(t, { user: 'bob', password: 'bob-pw' });
      try {
        const card = await fetchVcard(bob, 'alice@localhost');
        expect(card.getChildText('FN')).to.equal('Ålice Ünïcode ✓ 😀');
        expect(card.getChildText('NICKNAME')).to.equal('ålï');
        expect(typedEntries(card, 'TEL', 'HOME')).to.deep.equal(['١٢٣', '+47 22']);
      } finally {
        await stopAll(bob);
      }
    });
  });
}
