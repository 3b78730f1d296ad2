/** The answer to a jabber:iq:version query (XEP-0092 §2). */
import { release, type } from 'node:os';
import { x, type XmlElement } from '@service/plugin-api';

export const NS_VERSION = 'jabber:iq:version';

/** The product name announced: this server has no other public name. */
const SOFTWARE_NAME = 'service';

export function versionQuery(version: string, showOs: boolean): XmlElement {
  return x(
    'query',
    { xmlns: NS_VERSION },
    x('name', {}, SOFTWARE_NAME),
    x('version', {}, version),
    // Some operators consider the OS an information leak (XEP-0092 §5): it can be switched off.
    showOs ? x('os', {}, `${type()} ${release()}`) : undefined,
  );
}
