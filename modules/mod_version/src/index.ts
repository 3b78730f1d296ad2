/** mod_version: Software version (XEP-0092). (Being written.) */
import { defineModule } from '@service/kernel';

export default defineModule({
  name: 'mod_version',
  version: '0.1.0',
  kernel: '^0.1.0',
  summary: 'Software version (XEP-0092)',
  start() {
    return {};
  },
});
