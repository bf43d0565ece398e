// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// ServerConnection: one client of the BF.* server (redis/server/
// bloom_server.h) and its own upstream Redis connection.
//
// Every request gets a reply slot, in arrival order; slots are written to
// the client strictly in that order, whatever answers first. A request
// takes one of two lanes:
//   * BF.* / CBF.* and the key-space commands the BF.* interpreter answers
//     on filter names (DEL, EXPIRE, TTL, TYPE, ...) go to the BloomBatcher
//     under this connection's current credentials (user, password,
//     database), where they may be group-committed with other clients';
//   * everything else is written to the upstream connection; its replies
//     are framed (ReplyLength) and copied byte for byte into their slots.
// A request is sent only when the other lane has nothing in flight, so a
// client's commands take effect upstream in the order it sent them (AUTH or
// SELECT before a BF.ADD apply to it).
// AUTH / HELLO ... AUTH / SELECT / RESET that upstream Redis accepts change
// the credentials the BF.* lane uses; Redis itself verifies them.
// HELLO 3 is refused (NOPROTO, so clients stay on RESP2); BF.* inside MULTI
// is refused. After SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE or MONITOR the
// connection becomes a byte pipe to upstream for the rest of its life.
//
// Memory is bounded: a request larger than the query buffer limit is a
// protocol error; reading stops while max_pending_replies slots are open or
// more than max_output bytes wait to be written (in a pipe, while the other
// side's output is over that limit). A malformed request gets Redis's
// protocol error reply and the connection is closed after it.
//
// Thread safety: every method runs on the server's event loop thread.
// Ownership: the server owns connections; a connection asks the server to
// destroy it (ServerContext::destroy) as the last step of a callback.

#ifndef SIFTDB_REDIS_SERVER_SERVER_CONNECTION_H_
#define SIFTDB_REDIS_SERVER_SERVER_CONNECTION_H_

#include <sys/socket.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "redis/client/redis_reply.h"
#include "redis/server/bloom_batcher.h"
#include "redis/server/resp_codec.h"

struct event_base;
struct bufferevent;

namespace siftdb {

struct ServerLimits {
  size_t max_query_buffer = 64 << 20;
  size_t max_pending_replies = 1024;
  size_t max_output = 16 << 20;
};

// What every connection shares (owned by the server).
struct ServerContext {
  event_base* base = nullptr;
  BloomBatcher* batcher = nullptr;
  sockaddr_storage upstream{};
  socklen_t upstream_len = 0;
  BloomCredentials initial;  // sent as AUTH / SELECT on every upstream
  ServerLimits limits;
  std::function<void(uint64_t)> destroy;  // frees the connection by id
  // Hands a BF.* request to the batcher once the loop has read every
  // readable client (so one round's requests form one batch).
  std::function<void(BloomRequest)> submit;
};

class ServerConnection {
 public:
  // Takes `fd` (a connected client socket).
  ServerConnection(ServerContext* context, uint64_t id, int fd);
  ServerConnection(const ServerConnection&) = delete;
  ServerConnection& operator=(const ServerConnection&) = delete;
  ~ServerConnection();

  // Starts reading the client and connecting upstream; false on failure
  // (the caller then destroys the connection).
  bool Start();
  // A BF.* reply from the batcher for slot `slot`.
  void OnBloomReply(uint64_t slot, RedisReply reply);

  uint64_t id() const { return id_; }

 private:
  enum class Route { kUpstream, kBloom, kPipe };
  enum class Action { kNone, kAuth, kSelect, kReset };
  struct Slot {
    bool ready = false;
    std::string bytes;
  };
  struct Queued {  // a request waiting for its lane
    Route route;
    uint64_t slot;
    std::vector<std::string> argv;
  };
  struct Expect {  // a reply expected from upstream
    bool to_client;
    uint64_t slot;
    Action action;
    BloomCredentials credentials;  // kAuth, kSelect: applied on success
    bool pipe;                     // SUBSCRIBE / MONITOR: pipe from here
  };

  static void OnClientRead(bufferevent* bev, void* arg);
  static void OnClientWrite(bufferevent* bev, void* arg);
  static void OnClientEvent(bufferevent* bev, short what, void* arg);
  static void OnUpstreamRead(bufferevent* bev, void* arg);
  static void OnUpstreamWrite(bufferevent* bev, void* arg);
  static void OnUpstreamEvent(bufferevent* bev, short what, void* arg);

  void SendHidden(std::vector<std::string> argv, Action action,
                  BloomCredentials credentials);
  void ReadClient();
  void ReadUpstream();
  // Parses buffered requests while slots and output allow.
  void ParseRequests();
  void Handle(std::vector<std::string> argv);
  uint64_t OpenSlot();
  void LocalReply(std::string bytes);
  // Sends queued requests whose lane is free.
  void Dispatch();
  void SendUpstream(Queued q);
  void ApplyAction(const Expect& e, std::string_view reply);
  void EnterPipe();
  void Flush();
  // Enables or disables reading on both sides per the limits.
  void UpdateReading();
  void ProtocolError(const std::string& text);
  void Close();
  // After a callback: destroys the connection when it is closed and has
  // nothing left to write.
  void Settle();

  ServerContext* const context_;
  const uint64_t id_;
  int fd_;
  bufferevent* client_ = nullptr;
  bufferevent* upstream_ = nullptr;
  bool closed_ = false;
  bool close_after_flush_ = false;
  bool pipe_pending_ = false;  // a SUBSCRIBE is queued: parse no further
  bool pipe_ = false;
  bool in_multi_ = false;
  BloomCredentials credentials_;
  std::string in_;     // client bytes not parsed yet
  std::string up_in_;  // upstream bytes not framed yet
  std::deque<Slot> slots_;
  uint64_t first_slot_ = 0;  // slot number of slots_.front()
  std::deque<Queued> queued_;
  std::deque<Expect> expects_;
  size_t bloom_in_flight_ = 0;
  RespLimits resp_limits_;
};

}  // namespace siftdb

#endif  // SIFTDB_REDIS_SERVER_SERVER_CONNECTION_H_
