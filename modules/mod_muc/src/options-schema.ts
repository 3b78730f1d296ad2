/**
 * The declaration of default_room_options: one field per room option, under ejabberd's names, so that the
 * configuration is checked like any other (an unknown name gets a did-you-mean, a bad value names the
 * option and what was expected) and the generated documentation lists them.
 */
import type { OptionSpec } from '@service/plugin-api';
import type { RoomOptionName } from './types.js';

const bool = (doc: string) => ({ type: 'boolean', doc }) as const;
const str = (doc: string) => ({ type: 'string', doc }) as const;
const int = (doc: string) => ({ type: 'integer', min: 0, doc }) as const;

export const ROOM_OPTION_FIELDS = {
  title: str('The room title (muc#roomconfig_roomname).'),
  description: str('The room description (muc#roomconfig_roomdesc).'),
  persistent: bool('Whether the room outlives its last occupant (and a restart).'),
  public: bool('Whether the room is listed in service discovery.'),
  public_list: bool('Whether non-occupants may list the occupants.'),
  password_protected: bool('Whether entering requires the password.'),
  password: str('The password of a password-protected room.'),
  members_only: bool('Whether only members (and above) may enter.'),
  moderated: bool('Whether visitors are silenced.'),
  members_by_default: bool('Whether new occupants without affiliation get voice (participant) rather than visitor.'),
  allow_change_subj: bool('Whether participants may change the subject.'),
  allow_private_messages: bool('Whether occupants may send private messages to each other.'),
  allow_query_users: bool('Whether occupants may query other occupants.'),
  allow_user_invites: bool('Whether occupants (not only moderators) may invite others.'),
  allow_visitor_nickchange: bool('Whether visitors may change their nick.'),
  allow_visitor_status: bool('Whether visitors may send status text.'),
  allow_voice_requests: bool('Whether visitors may request voice.'),
  voice_request_min_interval: int('Seconds between two voice requests of one occupant.'),
  max_users: int('The maximum number of occupants (never above the service max_users).'),
  logging: bool('Whether the room is announced as logged (status 170).'),
  mam: bool('Whether the room archives its groupchat messages (XEP-0313, queried at its JID) and reads its history from that archive; needs mod_mam.'),
  allow_subscription: bool('Whether MUC/Sub subscriptions are allowed.'),
  lang: str('The language of the discussion.'),
  presence_broadcast: {
    type: 'list',
    of: { type: 'enum', values: ['moderator', 'participant', 'visitor'], doc: 'A role.' },
    doc: 'The roles whose presence is broadcast to the room.',
  },
  anonymous: bool('true: semi-anonymous (only moderators see real JIDs); false: non-anonymous.'),
  captcha_protected: bool('Must stay false: this server has no CAPTCHA.'),
} as const satisfies Readonly<Record<RoomOptionName, OptionSpec>>;
