/** mod_vcard: vCards (XEP-0054). (Being written.) */
import { defineModule } from '@service/kernel';

export default defineModule({
  name: 'mod_vcard',
  version: '0.1.0',
  kernel: '^0.1.0',
  summary: 'vCards (XEP-0054)',
  start() {
    return {};
  },
});
