-- pause.lua: pause or resume a queue. While its paused key exists, claim.lua
-- hands out nothing; jobs already running go on (ack, extend, retry, snooze
-- are not checked), and enqueues wait in due. A change is announced on the
-- queue's wake channel: on resume the message is the Redis clock in ms (a
-- wake-up for jobs due now, so idle workers claim at once), on pause it is
-- "paused". Safe to run twice: a second run changes nothing and is silent.
-- KEYS[1] paused string: "1" while paused, absent while running
-- ARGV[1] "1" = pause, "0" = resume   ARGV[2] the queue's wake channel
-- returns: 1 = the state changed, 0 = the queue already was so (nothing
--   changed, nothing published)
-- bound: O(1)

local on, channel = ARGV[1], ARGV[2]
if on ~= '1' and on ~= '0' then return redis.error_reply('ERR courier: pause takes "1" (pause) or "0" (resume)') end
if not channel or channel == '' then return redis.error_reply('ERR courier: pause needs the wake channel') end

if on == '1' then
  if not redis.call('SET', KEYS[1], '1', 'NX') then return 0 end
  announce(channel, 'paused')
  return 1
end
if redis.call('DEL', KEYS[1]) == 0 then return 0 end
announce(channel, string.format('%d', now_ms()))
return 1
