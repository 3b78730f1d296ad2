/**
 * The room configuration form (XEP-0045 §10.2, FORM_TYPE muc#roomconfig): the form an owner gets, filled
 * with the room's options, and the reading of a submitted one into options under ejabberd's names. Unknown
 * fields are ignored as the XEP says; a bad value refuses the whole submission (nothing changes).
 */
import { StanzaError, x, type XmlElement } from '@service/plugin-api';
import { NS_DATA, NS_MUC_ROOMCONFIG } from './ns.js';
import { BROADCAST_ROLES, assignOption, rolesOf } from './room-options.js';
import type { RoomOptionName, RoomOptions } from './types.js';

type FieldKind = 'text-single' | 'text-private' | 'boolean' | 'integer' | 'whois' | 'roles' | 'allowpm';

interface FieldSpec {
  readonly option: RoomOptionName;
  readonly kind: FieldKind;
  readonly label: string;
}

/** By field var; several vars may name one option (ejabberd's own spellings next to the XEP's). */
const FIELDS: Readonly<Record<string, FieldSpec>> = {
  'muc#roomconfig_roomname': { option: 'title', kind: 'text-single', label: 'Room title' },
  'muc#roomconfig_roomdesc': { option: 'description', kind: 'text-single', label: 'Room description' },
  'muc#roomconfig_lang': { option: 'lang', kind: 'text-single', label: 'Natural language for room discussions' },
  'muc#roomconfig_persistentroom': { option: 'persistent', kind: 'boolean', label: 'Make room persistent' },
  'muc#roomconfig_publicroom': { option: 'public', kind: 'boolean', label: 'Make room public searchable' },
  public_list: { option: 'public_list', kind: 'boolean', label: 'Make participants list public' },
  'muc#roomconfig_passwordprotectedroom': { option: 'password_protected', kind: 'boolean', label: 'Make room password protected' },
  'muc#roomconfig_roomsecret': { option: 'password', kind: 'text-private', label: 'Password' },
  'muc#roomconfig_maxusers': { option: 'max_users', kind: 'integer', label: 'Maximum number of occupants' },
  'muc#roomconfig_whois': { option: 'anonymous', kind: 'whois', label: 'Present real Jabber IDs to' },
  'muc#roomconfig_presencebroadcast': { option: 'presence_broadcast', kind: 'roles', label: 'Roles for which presence is broadcasted' },
  'muc#roomconfig_membersonly': { option: 'members_only', kind: 'boolean', label: 'Make room members-only' },
  'muc#roomconfig_moderatedroom': { option: 'moderated', kind: 'boolean', label: 'Make room moderated' },
  members_by_default: { option: 'members_by_default', kind: 'boolean', label: 'Default users as participants' },
  'muc#roomconfig_changesubject': { option: 'allow_change_subj', kind: 'boolean', label: 'Allow users to change the subject' },
  'muc#roomconfig_allowpm': { option: 'allow_private_messages', kind: 'allowpm', label: 'Allow users to send private messages' },
  allow_private_messages: { option: 'allow_private_messages', kind: 'boolean', label: 'Allow users to send private messages' },
  allow_query_users: { option: 'allow_query_users', kind: 'boolean', label: 'Allow users to query other users' },
  'muc#roomconfig_allowinvites': { option: 'allow_user_invites', kind: 'boolean', label: 'Allow users to send invites' },
  allow_visitor_status: { option: 'allow_visitor_status', kind: 'boolean', label: 'Allow visitors to send status text in presence updates' },
  allow_visitor_nickchange: { option: 'allow_visitor_nickchange', kind: 'boolean', label: 'Allow visitors to change nickname' },
  'muc#roomconfig_allowvoicerequests': { option: 'allow_voice_requests', kind: 'boolean', label: 'Allow visitors to send voice requests' },
  allow_voice_requests: { option: 'allow_voice_requests', kind: 'boolean', label: 'Allow visitors to send voice requests' },
  'muc#roomconfig_voicerequestmininterval': { option: 'voice_request_min_interval', kind: 'integer', label: 'Minimum interval between voice requests (in seconds)' },
  voice_request_min_interval: { option: 'voice_request_min_interval', kind: 'integer', label: 'Minimum interval between voice requests (in seconds)' },
  'muc#roomconfig_enablelogging': { option: 'logging', kind: 'boolean', label: 'Enable logging' },
  mam: { option: 'mam', kind: 'boolean', label: 'Enable message archiving' },
  'muc#roomconfig_allow_subscription': { option: 'allow_subscription', kind: 'boolean', label: 'Allow subscription' },
  allow_subscription: { option: 'allow_subscription', kind: 'boolean', label: 'Allow subscription' },
  captcha_protected: { option: 'captcha_protected', kind: 'boolean', label: 'Make room CAPTCHA protected' },
};

/** The vars the form shows (one per option; the aliases above are accepted on submission only). */
const SHOWN = Object.keys(FIELDS).filter((v) => !['allow_private_messages', 'allow_voice_requests', 'voice_request_min_interval', 'allow_subscription'].includes(v));

export function configForm(options: Readonly<RoomOptions>, title: string): XmlElement {
  const form = x('x', { xmlns: NS_DATA, type: 'form' }, x('title', {}, title), field('FORM_TYPE', 'hidden', [NS_MUC_ROOMCONFIG]));
  for (const v of SHOWN) {
    const spec = FIELDS[v]!;
    const value = options[spec.option];
    switch (spec.kind) {
      case 'text-single':
      case 'text-private':
        form.append(field(v, spec.kind, [String(value)], spec.label));
        break;
      case 'boolean':
        form.append(field(v, 'boolean', [value ? '1' : '0'], spec.label));
        break;
      case 'integer':
        form.append(field(v, 'text-single', [String(value)], spec.label));
        break;
      case 'whois':
        form.append(field(v, 'list-single', [value ? 'moderators' : 'anyone'], spec.label, ['moderators', 'anyone']));
        break;
      case 'allowpm':
        form.append(field(v, 'list-single', [value ? 'anyone' : 'none'], spec.label, ['anyone', 'participants', 'moderators', 'none']));
        break;
      case 'roles':
        form.append(field(v, 'list-multi', (value as readonly string[]).map(String), spec.label, [...BROADCAST_ROLES]));
        break;
    }
  }
  return form;
}

/**
 * The options after a submitted form: the current ones with each known field's value. Throws
 * StanzaError(not-acceptable) naming the field of the first bad value.
 */
export function applyConfigForm(current: Readonly<RoomOptions>, form: XmlElement): RoomOptions {
  const formType = form.getChildren('field').find((f) => f.attr('var') === 'FORM_TYPE');
  const typeValue = formType?.getChildText('value');
  if (typeValue !== undefined && typeValue !== NS_MUC_ROOMCONFIG) throw new StanzaError('bad-request', `FORM_TYPE must be ${NS_MUC_ROOMCONFIG}`);
  const out: RoomOptions = { ...current, presence_broadcast: [...current.presence_broadcast] };
  for (const f of form.getChildren('field')) {
    const name = f.attr('var');
    if (name === undefined) continue;
    const spec = Object.hasOwn(FIELDS, name) ? FIELDS[name] : undefined;
    if (!spec) continue;
    const values = f.getChildren('value').map((v) => v.text());
    const bad = () => new StanzaError('not-acceptable', `bad value for ${name}: '${values.join(' ')}'`);
    const one = values[0] ?? '';
    switch (spec.kind) {
      case 'text-single':
      case 'text-private':
        assignOption(out, spec.option, values.join('\n'));
        break;
      case 'boolean':
        if (one === '1' || one === 'true') assignOption(out, spec.option, true);
        else if (one === '0' || one === 'false') assignOption(out, spec.option, false);
        else throw bad();
        break;
      case 'integer':
        if (spec.option === 'max_users' && (one === 'none' || one === '')) break;
        if (!/^\d{1,9}$/.test(one)) throw bad();
        assignOption(out, spec.option, Number(one));
        break;
      case 'whois':
        if (one === 'moderators') out.anonymous = true;
        else if (one === 'anyone') out.anonymous = false;
        else throw bad();
        break;
      case 'allowpm':
        if (['anyone', 'participants', 'moderators', '1', 'true'].includes(one)) out.allow_private_messages = true;
        else if (['none', '0', 'false'].includes(one)) out.allow_private_messages = false;
        else throw bad();
        break;
      case 'roles':
        out.presence_broadcast = rolesOf(values, bad);
        break;
    }
  }
  return out;
}

function field(name: string, type: string, values: readonly string[], label?: string, options?: readonly string[]): XmlElement {
  const f = x('field', { var: name, type, label });
  for (const o of options ?? []) f.append(x('option', { label: o }, x('value', {}, o)));
  for (const v of values) f.append(x('value', {}, v));
  return f;
}

/** A data form's single value by var (forms of voice requests, registration…). */
export function formValue(form: XmlElement, name: string): string | undefined {
  return form.getChildren('field').find((f) => f.attr('var') === name)?.getChildText('value');
}

export { field as formField };
