#!/usr/bin/python3
"""
The PEP interop client (Debian python3-slixmpp; run with /usr/bin/python3): personal eventing (XEP-0163)
through slixmpp's own plugins, against the real server. Logs in over STARTTLS (verifying the server against
the test CA), fetches the roster and becomes available: its xep_0115 plugin announces entity capabilities
whose features include the +notify interests that xep_0084 (avatar metadata) and xep_0172 (nick) register,
and answers the server's disco#info query about them, which the server verifies against the hash.
  --publish-avatar TEXT   publishes TEXT's bytes as an avatar with xep_0084 (data, then metadata) and reports
                          the item id (the SHA-1 of the bytes, as the plugin names it)
  --publish-nick NICK     publishes a nick with xep_0172
  --expect-avatar-from J  waits for an avatar metadata notification from J, then retrieves the data item it
                          names with the plugin's retrieve_avatar and reports the bytes' SHA-1 (slixmpp 1.8.3's
                          Data.get_value cannot decode text, so the base64 text is decoded here)
  --expect-nick-from J    waits for a nick notification from J and reports it
It reports each step as a JSON line on stdout; slixmpp's debug log goes to stderr. Exits 0 when every step it
was asked for happened, 1 otherwise.
"""
import argparse
import asyncio
import base64
import hashlib
import json
import logging
import sys

import slixmpp


def report(event, **fields):
    print(json.dumps({'event': event, **fields}), flush=True)


class Client(slixmpp.ClientXMPP):
    def __init__(self, args):
        super().__init__(args.jid, args.password)
        self.args = args
        self.ok = False
        self.ca_certs = args.ca
        for plugin in ['xep_0030', 'xep_0060', 'xep_0115', 'xep_0163', 'xep_0084', 'xep_0172']:
            self.register_plugin(plugin)
        self.avatar_seen = asyncio.Event()
        self.nick_seen = asyncio.Event()
        self.add_event_handler('session_start', self.start)
        self.add_event_handler('avatar_metadata_publish', self.on_avatar)
        self.add_event_handler('user_nick_publish', self.on_nick)
        self.add_event_handler('disconnected', lambda _: report('disconnected'))

    def on_avatar(self, msg):
        if self.args.expect_avatar_from and msg['from'].bare == self.args.expect_avatar_from:
            item = msg['pubsub_event']['items']['item']
            info = item['avatar_metadata'].xml.find('{urn:xmpp:avatar:metadata}info')
            report('avatar_metadata', id=item['id'], bytes=info.get('bytes') if info is not None else None)
            self.avatar_item = item['id']
            self.avatar_seen.set()

    def on_nick(self, msg):
        if self.args.expect_nick_from and msg['from'].bare == self.args.expect_nick_from:
            report('nick', nick=msg['pubsub_event']['items']['item']['nick']['nick'])
            self.nick_seen.set()

    async def start(self, _event):
        try:
            await self.get_roster()
            self.send_presence()
            report('online')
            if self.args.publish_avatar is not None:
                data = self.args.publish_avatar.encode('utf-8')
                await self['xep_0084'].publish_avatar(data, timeout=10)
                avatar_id = self['xep_0084'].generate_id(data)
                await self['xep_0084'].publish_avatar_metadata({'id': avatar_id, 'type': 'image/png', 'bytes': len(data)}, timeout=10)
                report('published_avatar', id=avatar_id)
            if self.args.publish_nick is not None:
                await self['xep_0172'].publish_nick(self.args.publish_nick, timeout=10)
                report('published_nick', nick=self.args.publish_nick)
            if self.args.expect_avatar_from:
                await asyncio.wait_for(self.avatar_seen.wait(), self.args.wait)
                result = await self['xep_0084'].retrieve_avatar(slixmpp.JID(self.args.expect_avatar_from), self.avatar_item, timeout=10)
                text = result['pubsub']['items']['item']['avatar_data'].xml.text or ''
                report('avatar_data', sha1=hashlib.sha1(base64.b64decode(text)).hexdigest())
            if self.args.expect_nick_from:
                await asyncio.wait_for(self.nick_seen.wait(), self.args.wait)
            if self.args.linger:
                await asyncio.sleep(self.args.linger)
            self.ok = True
        except Exception as err:  # reported, and the exit status says it failed
            report('error', error=repr(err))
        finally:
            self.disconnect()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--jid', required=True)
    parser.add_argument('--password', required=True)
    parser.add_argument('--host', default='127.0.0.1')
    parser.add_argument('--port', type=int, required=True)
    parser.add_argument('--ca', required=True)
    parser.add_argument('--publish-avatar')
    parser.add_argument('--publish-nick')
    parser.add_argument('--expect-avatar-from')
    parser.add_argument('--expect-nick-from')
    parser.add_argument('--linger', type=float, default=0, help='stay online this long after the other steps')
    parser.add_argument('--wait', type=float, default=20)
    args = parser.parse_args()
    logging.basicConfig(level=logging.DEBUG, stream=sys.stderr, format='%(levelname)s %(name)s %(message)s')
    client = Client(args)
    client.connect(address=(args.host, args.port), use_ssl=False, force_starttls=True, disable_starttls=False)
    client.loop.run_until_complete(client.disconnected)
    sys.exit(0 if client.ok else 1)


if __name__ == '__main__':
    main()
