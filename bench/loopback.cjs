// Preloaded with `node --require` into peers that bind every interface
// (supergateway): a listen without a host binds 127.0.0.1 instead, so the
// benchmark never opens a port beyond loopback.
'use strict';
const net = require('node:net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const a = args[0];
  if (typeof a === 'number' || (typeof a === 'string' && /^\d+$/.test(a))) {
    if (typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
  } else if (a && typeof a === 'object' && a.port !== undefined && !a.host) {
    args[0] = { ...a, host: '127.0.0.1' };
  }
  return listen.apply(this, args);
};
