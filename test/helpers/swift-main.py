# Runs OpenStack Swift for the tests, all in this one Python process (as Swift's own in-process
# functional tests do): a proxy whose pipeline has s3api + tempauth, and one account, one container
# and one object server (one replica, one device under <dir>/srv) on free ports of 127.0.0.1.
#
#   /usr/bin/python3 swift-main.py <dir>
#
# Writes swift.conf, the server configs and the rings into <dir>, prints {"port": N} (the proxy's)
# once every server listens, and exits when stdin closes (the parent went away). One process instead
# of Swift's four: a quarter of the start-up work on a busy machine, and the sockets are bound (port 0)
# before the rings name their ports, so there is no race for free ports.
import json
import os
import sys
import time

from swift.common import utils

utils.eventlet_monkey_patch()

import eventlet  # noqa: E402
from eventlet import wsgi  # noqa: E402
from swift.common.ring import RingBuilder  # noqa: E402
from swift.common.wsgi import SwiftHttpProtocol, loadapp  # noqa: E402

SECRET = 'testing'  # tempauth user test:tester, S3 access key "test:tester"

PROXY_PIPELINE = """
[pipeline:main]
pipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats s3api tempauth copy slo dlo proxy-logging proxy-server
[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true
[filter:catch_errors]
use = egg:swift#catch_errors
[filter:gatekeeper]
use = egg:swift#gatekeeper
[filter:healthcheck]
use = egg:swift#healthcheck
[filter:proxy-logging]
use = egg:swift#proxy_logging
[filter:cache]
use = egg:swift#memcache
[filter:listing_formats]
use = egg:swift#listing_formats
[filter:s3api]
use = egg:swift#s3api
location = us-east-1
[filter:tempauth]
use = egg:swift#tempauth
user_test_tester = %s .admin
[filter:copy]
use = egg:swift#copy
[filter:slo]
use = egg:swift#slo
[filter:dlo]
use = egg:swift#dlo
""" % SECRET


def main(d):
    os.environ['TZ'] = 'UTC+0'
    time.tzset()
    os.makedirs(os.path.join(d, 'srv', 'd1'), exist_ok=True)
    kinds = ['account', 'container', 'object', 'proxy']
    socks = {k: eventlet.listen(('127.0.0.1', 0)) for k in kinds}
    ports = {k: s.getsockname()[1] for k, s in socks.items()}

    with open(os.path.join(d, 'swift.conf'), 'w') as f:
        f.write('[swift-hash]\nswift_hash_path_suffix = spaces-test\nswift_hash_path_prefix = spaces-test\n'
                '[storage-policy:0]\nname = default\ndefault = yes\n')
    utils.set_swift_dir(d)
    for kind in kinds:
        if kind == 'proxy':
            body = PROXY_PIPELINE
        else:
            body = '[pipeline:main]\npipeline = %s-server\n[app:%s-server]\nuse = egg:swift#%s\n' % (kind, kind, kind)
            # One ring per kind, one device each: part power 6, one replica.
            b = RingBuilder(6, 1, 1)
            b.add_dev({'id': 0, 'region': 1, 'zone': 1, 'ip': '127.0.0.1', 'port': ports[kind],
                       'device': 'd1', 'weight': 1.0})
            b.rebalance()
            b.get_ring().save(os.path.join(d, '%s.ring.gz' % kind))
        with open(os.path.join(d, '%s-server.conf' % kind), 'w') as f:
            f.write('[DEFAULT]\nswift_dir = %s\ndevices = %s/srv\nmount_check = false\nlog_level = WARNING\n%s'
                    % (d, d, body))

    for kind in kinds:
        app = loadapp(os.path.join(d, '%s-server.conf' % kind), global_conf={'log_name': kind})
        eventlet.spawn(wsgi.server, socks[kind], app, utils.NullLogger(),
                       custom_pool=eventlet.GreenPool(1024), protocol=SwiftHttpProtocol,
                       socket_timeout=60, capitalize_response_headers=False)

    def watch_stdin():
        fd = sys.stdin.fileno()
        while True:
            eventlet.hubs.trampoline(fd, read=True)
            if not os.read(fd, 4096):
                os._exit(0)

    eventlet.spawn(watch_stdin)
    sys.stdout.write(json.dumps({'port': ports['proxy']}) + '\n')
    sys.stdout.flush()
    while True:
        eventlet.sleep(3600)


if __name__ == '__main__':
    main(sys.argv[1])
