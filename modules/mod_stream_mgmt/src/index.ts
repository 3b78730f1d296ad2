/** mod_stream_mgmt: Stream management (XEP-0198): acknowledgements and session resumption. (Being written.) */
import { defineModule } from '@service/kernel';

export default defineModule({
  name: 'mod_stream_mgmt',
  version: '0.1.0',
  kernel: '^0.1.0',
  summary: 'Stream management (XEP-0198): acknowledgements and session resumption',
  start() {
    return {};
  },
});
