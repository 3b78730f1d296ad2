/**
 * The entity capabilities hash (XEP-0115 §5) that decides whether the server believes a client's +notify
 * features: the two examples of the XEP (§5.2, and §5.3 with identities in two languages and an extended
 * form), answers that must not verify (a changed feature, a duplicated feature), and unknown algorithms.
 */
import { expect } from 'chai';
import { x } from '@service/plugin-api';
import { supportedHash, verificationString, verifies } from '../../modules/mod_pubsub/src/caps-hash.js';

const NS_INFO = 'http://jabber.org/protocol/disco#info';
const feature = (v: string) => x('feature', { var: v });
const BASE_FEATURES = ['http://jabber.org/protocol/caps', NS_INFO, 'http://jabber.org/protocol/disco#items', 'http://jabber.org/protocol/muc'];

describe('the XEP-0115 caps hash (mod_pubsub)', () => {
  it('verifies the simple example of §5.2', () => {
    const query = x('query', { xmlns: NS_INFO }, x('identity', { category: 'client', type: 'pc', name: 'Exodus 0.9.1' }), ...BASE_FEATURES.map(feature));
    expect(verifies(query, 'sha-1', 'QgayPKawpkPSDYmwT/WM94uAlu0=')).to.equal(true);
  });

  it('verifies the complex example of §5.3 (languages, an extended form with several values)', () => {
    const field = (name: string, ...values: string[]) => x('field', { var: name }, ...values.map((v) => x('value', {}, v)));
    const query = x(
      'query',
      { xmlns: NS_INFO },
      x('identity', { 'xml:lang': 'en', category: 'client', name: 'Psi 0.11', type: 'pc' }),
      x('identity', { 'xml:lang': 'el', category: 'client', name: 'Ψ 0.11', type: 'pc' }),
      ...[...BASE_FEATURES].reverse().map(feature),
      x(
        'x',
        { xmlns: 'jabber:x:data', type: 'result' },
        x('field', { var: 'FORM_TYPE', type: 'hidden' }, x('value', {}, 'urn:xmpp:dataforms:softwareinfo')),
        field('ip_version', 'ipv4', 'ipv6'),
        field('os', 'Mac'),
        field('os_version', '10.5.1'),
        field('software', 'Psi'),
        field('software_version', '0.11'),
      ),
    );
    expect(verificationString(query)).to.equal(
      'client/pc/el/Ψ 0.11<client/pc/en/Psi 0.11<http://jabber.org/protocol/caps<http://jabber.org/protocol/disco#info<http://jabber.org/protocol/disco#items<http://jabber.org/protocol/muc<urn:xmpp:dataforms:softwareinfo<ip_version<ipv4<ipv6<os<Mac<os_version<10.5.1<software<Psi<software_version<0.11<',
    );
    expect(verifies(query, 'sha-1', 'q07IKJEyjvHSyhy//CH0CxmKi8w=')).to.equal(true);
  });

  it('does not verify a changed answer, duplicated features, or an unknown algorithm', () => {
    const identity = x('identity', { category: 'client', type: 'pc', name: 'Exodus 0.9.1' });
    const changed = x('query', { xmlns: NS_INFO }, identity, ...BASE_FEATURES.map(feature), feature('urn:example+notify'));
    expect(verifies(changed, 'sha-1', 'QgayPKawpkPSDYmwT/WM94uAlu0=')).to.equal(false);
    const duplicated = x('query', { xmlns: NS_INFO }, identity.clone(), ...BASE_FEATURES.map(feature), feature(NS_INFO));
    expect(verificationString(duplicated)).to.equal(undefined);
    expect(supportedHash('md5')).to.equal(false);
    expect(verifies(x('query', { xmlns: NS_INFO }, identity.clone(), ...BASE_FEATURES.map(feature)), 'md5', 'QgayPKawpkPSDYmwT/WM94uAlu0=')).to.equal(false);
  });
});
