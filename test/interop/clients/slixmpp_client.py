#!/usr/bin/python3
"""
The interop matrix's slixmpp client (Debian python3-slixmpp; run with /usr/bin/python3). Logs in over
STARTTLS, verifying the server against the test CA, with slixmpp's own SASL mechanism choice (or X-OAUTH2 when
given a token), fetches the roster, becomes available, sends one chat message to --peer and waits for one back.
With --muc (group chat, slixmpp's xep_0045 plugin): joins the room as --nick with join_muc_wait (which waits
for the self-presence and the subject, as XEP-0045 orders them), reports the occupants it saw, then as asked
waits for a subject (--muc-expect-subject) and a groupchat message (--muc-expect), sends one (--muc-send) and
waits for the room to reflect it back, and leaves (its own unavailable presence, status 110, comes back).
With --mam-forward / --mam-backward (the message archive, slixmpp's xep_0313 plugin with XEP-0059 paging):
fetches the account's whole archive, --mam-page messages per query, forwards with the plugin's own result
iterator (RSM <after/> the last id of each page), and backwards from the end (an empty RSM <before/>, as the
plugin's reverse iterator sends it, then <before/> the first id of each page). slixmpp 1.8.3's iterator stops
a reverse walk after its first page (its end test, first index + page size = count, holds for the newest
page), so the backward walk asks each further page with the plugin's retrieve() itself. Every page is
reported with its RSM summary and its messages.
It reports each step as a JSON line on stdout for the test to read; slixmpp's debug log goes to stderr, which the
test shows when something fails. Exits 0 when every step it was asked for happened, 1 otherwise.
"""
import argparse
import asyncio
import json
import logging
import ssl
import sys

import slixmpp
from slixmpp.xmlstream.handler import Callback
from slixmpp.xmlstream.matcher import MatchXPath


def report(event, **fields):
    print(json.dumps({'event': event, **fields}), flush=True)


class Client(slixmpp.ClientXMPP):
    def __init__(self, args):
        super().__init__(args.jid, args.password or '')
        self.args = args
        self.ok = False
        self.reply = asyncio.Event()
        self.ca_certs = args.ca
        if args.token:
            # slixmpp's X-OAUTH2 takes the token from this credential; there is no password to fall back on.
            self.credentials['access_token'] = args.token
        self.add_event_handler('session_start', self.start)
        self.add_event_handler('message', self.on_message)
        self.add_event_handler('failed_auth', lambda _: report('failed_auth', mechanism=self.mechanism()))
        self.add_event_handler('auth_success', lambda _: report('auth_success', mechanism=self.mechanism()))
        self.add_event_handler('disconnected', lambda _: report('disconnected'))
        if args.mam_forward or args.mam_backward:
            self.register_plugin('xep_0313')
        if args.muc:
            self.register_plugin('xep_0045')
            self.muc_events = asyncio.Queue()
            self.add_event_handler('groupchat_message', self.on_groupchat)
            self.add_event_handler('groupchat_subject', self.on_subject)
            self.add_event_handler('groupchat_presence', self.on_muc_presence)
            # Once it has left, the plugin forgets the room and reports nothing more of it, and slixmpp's own
            # presence events ignore the room's JIDs: its own unavailable presence is caught at the stanza level.
            self.register_handler(Callback('muc left', MatchXPath('{jabber:client}presence'), self.on_unavailable))

    def mechanism(self):
        mech = self.plugin['feature_mechanisms'].mech
        return mech.name if mech is not None else None

    async def start(self, _):
        # getpeercert() is empty unless the certificate was verified (here: against --ca, for the JID's domain).
        report('session_start', jid=str(self.boundjid), mechanism=self.mechanism(), tls=self.is_secure(),
               verified=self.is_secure() and bool(self.socket.getpeercert()))
        try:
            if self.args.roster:
                await self.get_roster(timeout=10)
                # What the library now holds as the roster (built from the server's result).
                items = {}
                for jid in self.client_roster.keys():
                    item = self.client_roster[jid]
                    items[str(jid)] = {'name': item['name'], 'subscription': item['subscription'], 'groups': list(item['groups'])}
                report('roster', items=items)
            self.send_presence()
            if self.args.peer:
                self.send_message(mto=self.args.peer, mbody=self.args.send, mtype='chat')
                report('sent', to=self.args.peer, body=self.args.send)
                await asyncio.wait_for(self.reply.wait(), self.args.wait)
            if self.args.muc:
                await asyncio.wait_for(self.muc_session(), self.args.wait)
            if self.args.mam_forward:
                await asyncio.wait_for(self.mam_forward(), self.args.wait)
            if self.args.mam_backward:
                await asyncio.wait_for(self.mam_backward(), self.args.wait)
            self.ok = True
        except Exception as err:  # reported, and the exit status says it failed
            report('error', error=repr(err))
        finally:
            self.disconnect()

    def report_mam_page(self, direction, iq):
        """One page as slixmpp parsed it: the <fin/> and its RSM set, and each <result/> the plugin collected."""
        fin, rsm = iq['mam_fin'], iq['mam_fin']['rsm']
        results = iq['mam']['results']
        messages = []
        for result in results:
            forwarded = result['mam_result']['forwarded']
            inner = forwarded['stanza']
            messages.append({'id': result['mam_result']['id'], 'queryid': result['mam_result']['queryid'],
                             'from': str(inner['from']), 'to': str(inner['to']), 'body': inner['body'],
                             'stamp': forwarded['delay']['stamp'].isoformat() if forwarded['delay']['stamp'] else None})
        count = rsm['count']
        index = rsm['first_index']
        report('mam_page', direction=direction, complete=fin.xml.get('complete') == 'true',
               first=rsm['first'] or None, first_index=int(index) if index not in (None, '') else None,
               last=rsm['last'] or None, count=int(count) if count not in (None, '') else None, messages=messages)
        return messages

    async def mam_forward(self):
        """The whole archive, oldest first, with the plugin's RSM iterator (each query: <after/> the last id)."""
        pages = self.plugin['xep_0313'].retrieve(iterator=True, rsm={'max': self.args.mam_page}, timeout=self.args.wait)
        total = 0
        async for page in pages:
            total += len(self.report_mam_page('forward', page))
        report('mam_done', direction='forward', messages=total)

    async def mam_backward(self):
        """The whole archive, newest page first: <before/> empty, then <before/> each page's first id."""
        mam = self.plugin['xep_0313']
        newest = mam.retrieve(iterator=True, reverse=True, rsm={'max': self.args.mam_page}, timeout=self.args.wait)
        page = await newest.next()
        messages = self.report_mam_page('backward', page)
        total = len(messages)
        while page['mam_fin'].xml.get('complete') != 'true' and messages:
            page = await mam.retrieve(rsm={'max': self.args.mam_page, 'before': page['mam_fin']['rsm']['first']},
                                      timeout=self.args.wait)
            messages = self.report_mam_page('backward', page)
            total += len(messages)
        report('mam_done', direction='backward', messages=total)

    def on_message(self, msg):
        if msg['type'] in ('chat', 'normal'):
            # The XEP-0359 stanza-id the server's archive gave the message, if any (its id in a MAM query).
            sid = msg.xml.find('{urn:xmpp:sid:0}stanza-id')
            report('received', sender=str(msg['from']), body=msg['body'],
                   stanza_id=None if sid is None else {'by': sid.get('by'), 'id': sid.get('id')})
            if self.args.peer and msg['from'].bare == slixmpp.JID(self.args.peer).bare:
                self.reply.set()

    async def muc_session(self):
        room, nick = slixmpp.JID(self.args.muc), self.args.nick
        muc = self.plugin['xep_0045']
        # No history: what arrives after the join is what the test sends.
        presence, subject, occupants, _history = await muc.join_muc_wait(room, nick, maxstanzas=0, timeout=self.args.wait)
        report('muc_joined', jid=str(presence['from']), codes=sorted(presence['muc']['status_codes']),
               affiliation=presence['muc']['affiliation'], role=presence['muc']['role'],
               subject=subject['subject'], occupants=sorted(str(p['from']) for p in occupants),
               roster=sorted(muc.get_roster(room)))
        if self.args.muc_expect_subject is not None:
            await self.muc_wait(lambda e: e[0] == 'subject' and e[1]['subject'] == self.args.muc_expect_subject)
        if self.args.muc_expect is not None:
            await self.muc_wait(lambda e: e[0] == 'message' and e[1]['body'] == self.args.muc_expect)
        if self.args.muc_send is not None:
            msg = self.make_message(mto=room, mbody=self.args.muc_send, mtype='groupchat')
            msg['id'] = self.new_id()
            msg.send()
            report('muc_sent', to=str(room), body=self.args.muc_send, id=msg['id'])
            # The room reflects an occupant's message to it too (XEP-0045 7.4): from its own occupant JID.
            await self.muc_wait(lambda e: e[0] == 'message' and e[1]['body'] == self.args.muc_send
                                and e[1]['from'].resource == muc.our_nicks[room])
        own = muc.our_nicks[room]
        muc.leave_muc(room, own)
        report('muc_leaving', room=str(room), nick=own)
        left = await self.muc_wait(lambda e: e[0] == 'unavailable' and e[1]['from'].bare == room.bare
                                   and e[1]['from'].resource == own)
        report('muc_left', sender=str(left[1]['from']), codes=sorted(left[1]['muc']['status_codes']))

    async def muc_wait(self, predicate):
        while True:
            event = await self.muc_events.get()
            if predicate(event):
                return event

    def on_groupchat(self, msg):
        report('groupchat', sender=str(msg['from']), body=msg['body'], id=msg['id'],
               delayed=msg.get_plugin('delay', check=True) is not None)
        self.muc_events.put_nowait(('message', msg))

    def on_subject(self, msg):
        report('muc_subject', sender=str(msg['from']), subject=msg['subject'])
        self.muc_events.put_nowait(('subject', msg))

    def on_muc_presence(self, pres):
        report('muc_presence', sender=str(pres['from']), type=pres['type'], codes=sorted(pres['muc']['status_codes']),
               affiliation=pres['muc']['affiliation'], role=pres['muc']['role'])
        self.muc_events.put_nowait(('presence', pres))

    def on_unavailable(self, pres):
        if pres['type'] == 'unavailable' and pres['from'].bare == slixmpp.JID(self.args.muc).bare:
            self.muc_events.put_nowait(('unavailable', pres))

    def is_secure(self):
        return isinstance(self.socket, (ssl.SSLSocket, ssl.SSLObject))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--jid', required=True)
    parser.add_argument('--password')
    parser.add_argument('--token')
    parser.add_argument('--host', default='127.0.0.1')
    parser.add_argument('--port', type=int, required=True)
    parser.add_argument('--ca', required=True)
    parser.add_argument('--peer', help='send a chat message to this JID and wait for one from it')
    parser.add_argument('--send', default='hello from slixmpp')
    parser.add_argument('--roster', action='store_true')
    parser.add_argument('--wait', type=float, default=15)
    parser.add_argument('--muc', help='join this room (XEP-0045) after the session started')
    parser.add_argument('--nick', default='slixmpp', help='the nick in --muc')
    parser.add_argument('--muc-expect', help='wait for a groupchat message with this body')
    parser.add_argument('--muc-expect-subject', help='wait for the room subject to become this')
    parser.add_argument('--muc-send', help='send this groupchat message (after what is expected arrived)')
    parser.add_argument('--mam-forward', action='store_true', help='fetch the whole archive, oldest page first (XEP-0313)')
    parser.add_argument('--mam-backward', action='store_true', help='fetch the whole archive, newest page first')
    parser.add_argument('--mam-page', type=int, default=50, help='RSM <max/> of each archive query')
    args = parser.parse_args()
    logging.basicConfig(level=logging.DEBUG, stream=sys.stderr, format='%(asctime)s %(levelname)s %(name)s %(message)s')
    report('version', slixmpp=slixmpp.__version__, python=sys.version.split()[0])
    client = Client(args)
    if args.token:
        client['feature_mechanisms'].use_mech = 'X-OAUTH2'
    client.connect(address=(args.host, args.port), use_ssl=False, force_starttls=True, disable_starttls=False)
    client.loop.run_until_complete(client.disconnected)
    sys.exit(0 if client.ok else 1)


if __name__ == '__main__':
    main()
