/**
 * ACLs, access rules and api_permissions, checked directly against ejabberd's semantics: from/who/what
 * matrices over frontends, addresses, accounts and tokens.
 */
import { expect } from 'chai';
import { parse } from 'yaml';
import { AccessControl } from '../../kernel/src/access/access-control.js';
import { parseAclSection } from '../../kernel/src/access/acl.js';
import { parseAccessRulesSection } from '../../kernel/src/access/access-rules.js';
import { parseApiPermissionsSection } from '../../kernel/src/access/api-permissions.js';
import type { Caller } from '@service/plugin-api';
import { OptionIssues } from '../../kernel/src/config/option-spec.js';

function control(yaml: string): AccessControl {
  const raw = parse(yaml) ?? {};
  return new AccessControl({
    hosts: ['localhost', 'example.com'],
    acl: parseAclSection(raw.acl, ['acl']),
    accessRules: parseAccessRulesSection(raw.access_rules, ['access_rules']),
    apiPermissions: raw.api_permissions === undefined ? undefined : parseApiPermissionsSection(raw.api_permissions, ['api_permissions']),
  });
}

const http = (extra: Partial<Caller> = {}): Caller => ({ frontend: 'mod_http_api', ip: '127.0.0.1', ...extra });
const as = (jid: string, extra: Partial<Caller> = {}): Caller => {
  const [user, host] = jid.split('@') as [string, string];
  return http({ account: { user, host }, ...extra });
};
const cmd = (name: string, ...tags: string[]) => ({ name, tags });

describe('access control', () => {
  describe('ACLs', () => {
    const ac = control(`
acl:
  admin:
    user: admin@localhost
  anyadmin:
    user: admin
  staff:
    - user_regexp: "^staff-"
    - user: { boss: example.com }
  globbed:
    user_glob: "dev-?[0-9]*"
  examplers:
    server: example.com
  nodes:
    node_regexp: { "^ops": "^example\\\\.com$" }
  lan:
    ip: [10.0.0.0/8, "fd00::/8", 192.168.1.7]
`);
    const subject = (jid?: string, ip?: string) => {
      const [user, server] = jid ? jid.split('@') : [];
      return { user, server, ip };
    };

    it('matches user with and without a server part', () => {
      expect(ac.matchAcl('admin', subject('admin@localhost'))).to.equal(true);
      expect(ac.matchAcl('admin', subject('admin@example.com'))).to.equal(false);
      expect(ac.matchAcl('anyadmin', subject('admin@example.com'))).to.equal(true);
      expect(ac.matchAcl('anyadmin', subject('admin@remote.org'))).to.equal(false, 'only served vhosts');
    });

    it('matches any rule of a list: regexp, map form, glob, server, node_regexp', () => {
      expect(ac.matchAcl('staff', subject('staff-ann@localhost'))).to.equal(true);
      expect(ac.matchAcl('staff', subject('boss@example.com'))).to.equal(true);
      expect(ac.matchAcl('staff', subject('boss@localhost'))).to.equal(false);
      expect(ac.matchAcl('globbed', subject('dev-a42@localhost'))).to.equal(true);
      expect(ac.matchAcl('globbed', subject('xdev-a42@localhost'))).to.equal(false, 'globs are anchored');
      expect(ac.matchAcl('examplers', subject('anyone@example.com'))).to.equal(true);
      expect(ac.matchAcl('nodes', subject('ops1@example.com'))).to.equal(true);
      expect(ac.matchAcl('nodes', subject('ops1@localhost'))).to.equal(false);
    });

    it('matches ip networks and single addresses, v4 and v6', () => {
      expect(ac.matchAcl('lan', subject(undefined, '10.1.2.3'))).to.equal(true);
      expect(ac.matchAcl('lan', subject(undefined, '192.168.1.7'))).to.equal(true);
      expect(ac.matchAcl('lan', subject(undefined, '192.168.1.8'))).to.equal(false);
      expect(ac.matchAcl('lan', subject(undefined, 'fd12::1'))).to.equal(true);
      expect(ac.matchAcl('lan', subject(undefined, '11.0.0.1'))).to.equal(false);
    });

    it('has all and none built in, and an unknown name matches nobody', () => {
      expect(ac.matchAcl('all', subject())).to.equal(true);
      expect(ac.matchAcl('none', subject('admin@localhost'))).to.equal(false);
      expect(ac.matchAcl('nonexistent', subject('admin@localhost'))).to.equal(false);
    });
  });

  describe('access rules', () => {
    const ac = control(`
acl:
  admin: { user: admin@localhost }
  blocked: { user: mallory@localhost }
  loopback: { ip: 127.0.0.0/8 }
access_rules:
  c2s:
    deny: blocked
    allow: all
  both:
    - allow:
        - acl: admin
        - ip: 127.0.0.1
  inline:
    - deny: { user: eve@localhost }
    - allow
`);
    it('tries entries in order; the first that matches decides; nothing matching denies', () => {
      expect(ac.matchRule('c2s', { user: 'mallory', server: 'localhost' })).to.equal('deny');
      expect(ac.matchRule('c2s', { user: 'alice', server: 'localhost' })).to.equal('allow');
      expect(ac.matchRule('undefined_rule', { user: 'alice', server: 'localhost' })).to.equal('deny');
      expect(ac.matchRule('all', {})).to.equal('allow');
      expect(ac.matchRule('none', {})).to.equal('deny');
    });

    it('requires every condition of one entry', () => {
      expect(ac.matchRule('both', { user: 'admin', server: 'localhost', ip: '127.0.0.1' })).to.equal('allow');
      expect(ac.matchRule('both', { user: 'admin', server: 'localhost', ip: '10.0.0.1' })).to.equal('deny');
      expect(ac.matchRule('both', { user: 'bob', server: 'localhost', ip: '127.0.0.1' })).to.equal('deny');
    });

    it('takes inline rules and a bare allow', () => {
      expect(ac.matchRule('inline', { user: 'eve', server: 'localhost' })).to.equal('deny');
      expect(ac.matchRule('inline', { user: 'bob', server: 'localhost' })).to.equal('allow');
    });
  });

  describe('api_permissions', () => {
    const ac = control(`
acl:
  admin: { user: admin@localhost }
  loopback: { ip: [127.0.0.0/8, "::1/128"] }
access_rules:
  api_ok:
    allow: admin
api_permissions:
  "public commands":
    who:
      ip: 127.0.0.1/8
    what:
      - status
      - connected_users_number
  "tagged":
    from:
      - mod_http_api
    who:
      user: auditor@localhost
    what: "[tag:statistics]"
  "admin access":
    who:
      - access: api_ok
      - oauth:
          scope: "service:admin"
          access: api_ok
    what:
      - "*"
      - "!stop"
      - "![tag:dangerous]"
  "ctl only":
    from: service_ctl
    who: all
    what: stop
  "by tag":
    from:
      - tag: internal
    who: all
    what: "*"
`);
    it('lets loopback run the public commands, and only those, without an account', () => {
      expect(ac.check(cmd('status'), http()).allowed).to.equal(true);
      expect(ac.check(cmd('connected_users_number'), http()).allowed).to.equal(true);
      expect(ac.check(cmd('registered_users'), http()).allowed).to.equal(false);
      expect(ac.check(cmd('status'), http({ ip: '10.0.0.9' })).allowed).to.equal(false);
    });

    it('evaluates what with "*", negations and tags', () => {
      const admin = as('admin@localhost', { ip: '10.0.0.9' });
      expect(ac.check(cmd('register', 'accounts'), admin)).to.deep.equal({ allowed: true, group: 'admin access' });
      expect(ac.check(cmd('stop', 'server'), admin).allowed).to.equal(false);
      expect(ac.check(cmd('wipe', 'dangerous'), admin).allowed).to.equal(false);
      expect(ac.check(cmd('stats', 'statistics'), as('auditor@localhost', { ip: '10.0.0.9' })).allowed).to.equal(true);
      expect(ac.check(cmd('register', 'accounts'), as('auditor@localhost', { ip: '10.0.0.9' })).allowed).to.equal(false);
    });

    it('evaluates from: frontends and listener tags', () => {
      const ctl: Caller = { frontend: 'service_ctl' };
      expect(ac.check(cmd('stop'), ctl).allowed).to.equal(true, 'ctl only group');
      expect(ac.check(cmd('stats', 'statistics'), as('auditor@localhost', { frontend: 'service_xmlrpc' })).allowed).to.equal(false);
      expect(ac.check(cmd('anything'), http({ ip: '10.1.1.1', tag: 'internal' })).allowed).to.equal(true);
      expect(ac.check(cmd('anything'), http({ ip: '10.1.1.1', tag: 'public' })).allowed).to.equal(false);
    });

    it('grants servicectl everything through the implicit console commands group', () => {
      expect(ac.check(cmd('register'), { frontend: 'service_ctl' })).to.deep.equal({ allowed: true, group: 'console commands' });
      const custom = control(`
api_permissions:
  "console commands":
    from: service_ctl
    who: all
    what: status
`);
      expect(custom.check(cmd('status'), { frontend: 'service_ctl' }).allowed).to.equal(true);
      expect(custom.check(cmd('register'), { frontend: 'service_ctl' }).allowed).to.equal(false, 'an operator-defined group replaces it');
    });

    it('uses only oauth clauses for token callers, and only the others otherwise', () => {
      const tokenAdmin = as('admin@localhost', { ip: '10.0.0.9', oauth: { scopes: ['service:admin'], tokenId: 't1' } });
      expect(ac.check(cmd('register'), tokenAdmin).allowed).to.equal(true);
      const wrongScope = as('admin@localhost', { ip: '10.0.0.9', oauth: { scopes: ['get_roster'], tokenId: 't2' } });
      expect(ac.check(cmd('register'), wrongScope).allowed).to.equal(false);
      const tokenUser = as('bob@localhost', { ip: '10.0.0.9', oauth: { scopes: ['service:admin'], tokenId: 't3' } });
      expect(ac.check(cmd('register'), tokenUser).allowed).to.equal(false, 'the account must pass the clause rules');
      const loopbackToken = http({ oauth: { scopes: ['service:admin'], tokenId: 't4' } });
      expect(ac.check(cmd('status'), loopbackToken).allowed).to.equal(false, 'ip clauses do not apply to token calls');
    });

    it('explains each group for a denial', () => {
      const lines = ac.explain(cmd('register'), as('bob@localhost', { ip: '10.0.0.9' }));
      expect(lines).to.deep.equal([
        "'console commands': from does not include mod_http_api",
        "'public commands': what does not include register",
        "'tagged': what does not include register",
        "'admin access': who did not match bob@localhost from 10.0.0.9 (tried access: api_ok)",
        "'ctl only': what does not include register",
        "'by tag': from does not include mod_http_api",
      ]);
    });

    it('defaults to ejabberd\'s: the admin ACL runs all but start and stop', () => {
      const defaults = control('acl:\n  admin:\n    user: admin@localhost\n');
      expect(defaults.check(cmd('register'), as('admin@localhost')).allowed).to.equal(true);
      expect(defaults.check(cmd('stop'), as('admin@localhost')).allowed).to.equal(false);
      expect(defaults.check(cmd('status'), http()).allowed).to.equal(false);
    });

    it('parses "!*" as nothing and a what without positives as nothing', () => {
      const nothing = control(`
api_permissions:
  a: { who: all, what: ["*", "!*"] }
  b: { who: all, what: ["!stop"] }
`);
      expect(nothing.check(cmd('status'), http()).allowed).to.equal(false);
    });
  });

  describe('decisions kept between calls', () => {
    it('answers a repeated call the same, and tells callers that differ in any part apart', () => {
      const ac = control(`
acl:
  admin: { user: admin@localhost }
  loopback: { ip: 127.0.0.0/8 }
api_permissions:
  public: { who: { acl: loopback }, what: status }
  admin: { who: [{ acl: admin }, { oauth: { scope: "service:admin", acl: admin } }], what: "*" }
`);
      const decl = cmd('registered_users', 'accounts');
      for (let i = 0; i < 3; i++) {
        expect(ac.check(decl, as('admin@localhost')).allowed).to.equal(true);
        expect(ac.check(decl, as('bob@localhost')).allowed).to.equal(false);
        expect(ac.check(decl, as('admin@localhost', { oauth: { scopes: ['service:admin'], tokenId: 'a' } })).allowed).to.equal(true);
        expect(ac.check(decl, as('admin@localhost', { oauth: { scopes: ['service:user'], tokenId: 'b' } })).allowed).to.equal(false);
        expect(ac.check(cmd('status'), http()).allowed).to.equal(true);
        expect(ac.check(cmd('status'), http({ ip: '10.0.0.1' })).allowed).to.equal(false);
        expect(ac.check(cmd('status'), http({ frontend: 'service_xmlrpc' })).allowed).to.equal(true);
      }
    });

    it('asks again each time when a shared_group rule decides: membership changes', () => {
      const ac = control(`
acl:
  team: { shared_group: staff@localhost }
api_permissions:
  team: { who: { acl: team }, what: "*" }
`);
      let member = true;
      ac.setSharedGroupLookup(() => member);
      expect(ac.check(cmd('status'), as('ann@localhost')).allowed).to.equal(true);
      member = false;
      expect(ac.check(cmd('status'), as('ann@localhost')).allowed).to.equal(false);
    });
  });

  describe('errors', () => {
    it('collects every problem with its path', () => {
      try {
        control(`
acl:
  a: { user: [x, { y: 1 }], ip: nonsense }
  all: { user: x }
`);
        expect.fail('accepted');
      } catch (err) {
        expect(err).to.be.instanceOf(OptionIssues);
        const messages = (err as OptionIssues).issues.map((i) => `${i.path.join('.')}: ${i.message}`);
        expect(messages).to.include("acl.a.ip: 'nonsense' is not an IP address or network (like 127.0.0.0/8 or ::1/128)");
        expect(messages).to.include("acl.all: 'all' is built in and cannot be redefined");
      }
    });
  });
});
