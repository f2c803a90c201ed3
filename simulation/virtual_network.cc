#include "simulation/virtual_network.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace fastk::simulation {
namespace {

std::vector<double> pool_groups(const MachineCosts& costs) {
  return costs.group_cores.empty() ? std::vector<double>{0.0} : costs.group_cores;
}

void check_costs(const MachineCosts& costs, std::size_t peers) {
  for (double c : {costs.gradient_cpu_s, costs.gradient_stats_cpu_s, costs.receive_s, costs.send_s,
                   costs.update_s, costs.update_per_term_s, costs.decision_s,
                   costs.loss_cpu_s_per_sample, costs.latency_s, costs.link_bytes_per_s}) {
    if (!(c >= 0)) throw std::invalid_argument("VirtualNetwork: machine costs must be >= 0");
  }
  if (costs.cpu_group.empty()) return;
  if (costs.cpu_group.size() != peers) {
    throw std::invalid_argument("VirtualNetwork: " + std::to_string(costs.cpu_group.size()) +
                                " CPU groups given for " + std::to_string(peers) + " peers");
  }
  for (int g : costs.cpu_group) {
    if (g < 0 || g >= static_cast<int>(costs.group_cores.size())) {
      throw std::invalid_argument("VirtualNetwork: CPU group " + std::to_string(g) +
                                  " does not exist");
    }
  }
}

// What a message puts on a link: its vectors as float32, plus the header's allowance.
std::int64_t message_bytes(const consensus::Message& message) {
  const ActionHandlers payload{
      [](const consensus::ModelArrived& m) {
        return m.params ? m.params->values().size_bytes() : 0;
      },
      [](const consensus::CodedGradientArrived& m) {
        return m.coded && m.coded->gradient ? m.coded->gradient->values().size_bytes() : 0;
      },
      [](const consensus::DifferenceArrived& m) {
        return m.difference ? m.difference->payload_bytes() : 0;
      },
      [](const consensus::AveragingArrived& m) {
        return m.params ? m.params->values().size_bytes() : 0;
      },
      [](const consensus::NeighbourLeft&) { return std::size_t{0}; },
  };
  return static_cast<std::int64_t>(std::visit(payload, message)) + kMessageOverheadBytes;
}

}  // namespace

VirtualNetwork::VirtualNetwork(std::vector<std::unique_ptr<PeerProtocol>> peers,
                               DelaySource& delays, GradientSource& gradients, MachineCosts costs)
    : peers_(std::move(peers)),
      removed_(peers_.size(), false),
      delays_(delays),
      gradients_(gradients),
      costs_(std::move(costs)),
      pool_(pool_groups(costs_)),
      threads_(peers_.size()),
      links_(static_cast<int>(peers_.size()), costs_.link_bytes_per_s),
      generation_(peers_.size(), 0),
      left_(peers_.size(), false),
      gradient_token_(peers_.size(), 0),
      gradient_iteration_(peers_.size(), 0) {
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    if (!peers_[i] || peers_[i]->id() != static_cast<PeerId>(i)) {
      throw std::invalid_argument("VirtualNetwork: peer " + std::to_string(i) +
                                  " missing or out of order");
    }
  }
  check_costs(costs_, peers_.size());
}

int VirtualNetwork::group_of(PeerId peer) const {
  return costs_.cpu_group.empty() ? 0 : costs_.cpu_group[static_cast<std::size_t>(peer)];
}

void VirtualNetwork::schedule(Event event) {
  event.sequence = sequence_++;
  queue_.push(std::move(event));
}

void VirtualNetwork::start(double now_s) {
  now_s_ = now_s;
  for (auto& peer : peers_) {
    Actions actions;
    peer->start(now_s, actions);
    execute(peer->id(), actions);
  }
}

void VirtualNetwork::start_at(const std::vector<double>& start_s) {
  if (start_s.size() != peers_.size()) {
    throw std::invalid_argument("start_at: " + std::to_string(start_s.size()) +
                                " start times for " + std::to_string(peers_.size()) + " peers");
  }
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    schedule({start_s[i], 0, static_cast<PeerId>(i), Begin{}});
  }
}

void VirtualNetwork::execute(PeerId peer, Actions& actions) {
  // Executing may not re-enter a protocol, so `actions` stays valid throughout.
  const ActionHandlers handle{
      [&](SendParams& params) {
        for (PeerId to : params.to) {
          send(peer, to, consensus::ModelArrived{peer, params.tag, params.params});
        }
      },
      [&](SendCoded& coded) {
        send(peer, coded.to, consensus::CodedGradientArrived{peer, coded.tag, coded.coded});
      },
      [&](SendAveraging& a) {
        send(peer, a.to, consensus::AveragingArrived{peer, a.tag, a.step, a.params});
      },
      [&](SendCompressed& c) {
        for (PeerId to : c.to) {
          send(peer, to, consensus::DifferenceArrived{peer, c.tag, c.difference});
        }
      },
      [&](StartGradient& grad) { start_gradient(peer, grad); },
      [&](StartValidation& validation) { start_validation(peer, validation); },
      [&](ArmTimer& timer) {
        const double at_s = timer.at_s + delays_.timer_latency_s(peer, timer.at_s);
        schedule({std::max(now_s_, at_s), 0, peer, TimerDue{}});
      },
      [&](IterationCompleted& done) {
        if (on_record) on_record(done.record);
      },
      [](NeighbourGone&) {},  // remove_peer told the neighbours; nothing to schedule
      [&](Finished&) {
        ++finished_;
        say_goodbye(peer, false);
      },
  };
  for (auto& action : actions) std::visit(handle, action);
}

void VirtualNetwork::start_gradient(PeerId peer, const StartGradient& request) {
  // The last update's gradient is no longer read: a real peer computes the next one into it.
  gradients_.recycle(peers_[static_cast<std::size_t>(peer)]->release_gradient());
  gradients_.begin(peer, request);
  // Coded peers without split batches do `work` gradients' worth of compute. On a measured
  // machine the gradient is CPU work (more when it also yields statistics) and what a
  // slowdown adds is a sleep of its share of the plain gradient, as in real peers; a factor
  // below 1 cannot make the CPU work faster, so it adds nothing.
  // A peer on a slower host (MachineCosts::gradient_scale) does the same CPU work more
  // slowly; the sleep a slowdown adds is the calibrated machine's, as a real peer's is
  // (node/stragglers/delay_model.h: the factor times the calibrated gradient time).
  const double scale = static_cast<std::size_t>(peer) < costs_.gradient_scale.size()
                           ? costs_.gradient_scale[static_cast<std::size_t>(peer)]
                           : 1.0;
  const double total_s = request.work * delays_.compute_time_s(peer, request.iteration);
  const bool measured = costs_.gradient_cpu_s > 0;
  const double stats_s =
      costs_.gradient_stats_cpu_s > 0 ? costs_.gradient_stats_cpu_s : costs_.gradient_cpu_s;
  const double cpu_s =
      scale * request.work * (request.gradient_stats ? stats_s : costs_.gradient_cpu_s);
  Job job;
  job.peer = peer;
  job.kind = JobKind::kGradient;
  job.iteration = request.iteration;
  job.token = ++next_token_;
  gradient_token_[static_cast<std::size_t>(peer)] = job.token;
  gradient_iteration_[static_cast<std::size_t>(peer)] = request.iteration;
  job.sleep_s = measured ? std::max(0.0, total_s - request.work * costs_.gradient_cpu_s) : 0.0;
  run_job(std::move(job), measured ? cpu_s : total_s);
}

// The forward passes of a validation, on the compute thread like a gradient: on a measured
// machine their CPU work (each model over the batch), on the abstract simulator none.
void VirtualNetwork::start_validation(PeerId peer, const StartValidation& request) {
  const double scale = static_cast<std::size_t>(peer) < costs_.gradient_scale.size()
                           ? costs_.gradient_scale[static_cast<std::size_t>(peer)]
                           : 1.0;
  Job job;
  job.peer = peer;
  job.kind = JobKind::kValidation;
  job.iteration = request.iteration;
  job.losses = gradients_.losses(peer, request);
  const double samples =
      static_cast<double>(request.batch) * static_cast<double>(request.models.size());
  run_job(std::move(job), scale * costs_.loss_cpu_s_per_sample * samples);
}

void VirtualNetwork::send(PeerId from, PeerId to, consensus::Message message) {
  // A link keeps its order, as a TCP connection does: a message never overtakes the one sent
  // before it, whatever their delays (the protocol's exactness under policy full needs it).
  double& last_s = link_last_arrival_s_[{from, to}];
  // A real peer holds no injected delay before a BYE (only behind the sender's earlier messages).
  const bool bye = std::holds_alternative<consensus::NeighbourLeft>(message);
  // Only models are superseded in a real sender's queue (node/peer/outbound_queue.h).
  if (std::holds_alternative<consensus::ModelArrived>(message) &&
      !delays_.delivered(from, to, consensus::tag_of(message))) {
    return;
  }
  const double delay_s = bye ? delays_.goodbye_delay_s(from, to)
                             : delays_.link_delay_s(from, to, consensus::tag_of(message));
  const double at_s = std::max(
      links_.arrival_s(from, to, now_s_, message_bytes(message), costs_.latency_s + delay_s),
      last_s);
  last_s = at_s;
  schedule({at_s, 0, to, std::move(message)});
  ++messages_;
}

// A real peer that finished says BYE, and an ad_psgd neighbour then stops asking it to
// average (it would only decline). The other policies mix a finished neighbour's last model
// whether or not it said BYE (that model is fresh for every iteration left), so only
// pairwise-averaging runs are sent one, behind the peer's last messages on each link.
void VirtualNetwork::say_goodbye(PeerId peer, bool always) {
  const PeerProtocol& protocol = *peers_[static_cast<std::size_t>(peer)];
  if (!always && !goodbyes_always && !protocol.neighbours_need_goodbye()) return;
  for (PeerId j : protocol.contacts()) {
    send(peer, j, consensus::NeighbourLeft{peer, protocol.iteration()});
  }
}

void VirtualNetwork::run_job(Job job, double work_s) {
  const std::uint64_t id = next_job_++;
  job.generation = generation_[static_cast<std::size_t>(job.peer)];
  const int group = group_of(job.peer);
  const PeerId job_peer = job.peer;
  jobs_.emplace(id, std::move(job));
  if (costs_.group_cores.empty() || costs_.group_cores[static_cast<std::size_t>(group)] <= 0) {
    schedule({now_s_ + work_s, 0, job_peer, JobDone{id}});  // a core of its own
    return;
  }
  pool_jobs_[pool_.start(group, work_s, now_s_)] = id;
  schedule_pool_check();
}

void VirtualNetwork::schedule_pool_check() {
  const auto next = pool_.next_finish();
  if (!next) return;
  pool_check_ = sequence_;
  schedule({std::max(now_s_, next->at_s), 0, 0, PoolCheck{}});
}

void VirtualNetwork::check_pool(std::uint64_t sequence) {
  if (sequence != pool_check_) return;  // the pool changed since this check was scheduled
  const auto next = pool_.next_finish();
  if (!next) return;
  pool_.finish({now_s_, next->job, next->group});
  const auto it = pool_jobs_.find(next->job);
  const std::uint64_t id = it->second;
  pool_jobs_.erase(it);
  job_done(id);
  schedule_pool_check();
}

void VirtualNetwork::job_done(std::uint64_t id) {
  const auto it = jobs_.find(id);
  Job job = std::move(it->second);
  jobs_.erase(it);
  const auto peer = static_cast<std::size_t>(job.peer);
  if (removed_[peer] || job.generation != generation_[peer]) return;
  switch (job.kind) {
    case JobKind::kGradient: {
      Event e{now_s_ + job.sleep_s, 0, job.peer, GradientReady{job.iteration, job.token}};
      if (job.sleep_s > 0) {
        schedule(std::move(e));
      } else {
        accept_input(e);
      }
      return;
    }
    case JobKind::kValidation:
      accept_input({now_s_, 0, job.peer, ValidationReady{job.iteration, std::move(job.losses)}});
      return;
    case JobKind::kIo:
      threads_[static_cast<std::size_t>(job.peer)].io_busy = false;
      execute(job.peer, job.actions);
      drain_inputs(job.peer);
      return;
  }
}

void VirtualNetwork::dispatch(const Event& event) {
  if (const auto* done = std::get_if<JobDone>(&event.what)) {
    job_done(done->job);
  } else if (std::holds_alternative<PoolCheck>(event.what)) {
    check_pool(event.sequence);
  } else if (std::holds_alternative<Begin>(event.what)) {
    Actions actions;
    peers_[static_cast<std::size_t>(event.peer)]->start(now_s_, actions);
    execute(event.peer, actions);
  } else if (std::holds_alternative<Leave>(event.what)) {
    leave(event.peer);
  } else if (std::holds_alternative<Rejoin>(event.what)) {
    rejoin(event.peer);
  } else if (const auto* back = std::get_if<TakeBack>(&event.what)) {
    const auto j = static_cast<std::size_t>(event.peer);
    if (removed_[j] || peers_[j]->finished()) return;
    Actions actions;
    peers_[j]->handle(now_s_, consensus::NeighbourBack{back->peer}, actions);
    execute(event.peer, actions);
  } else {
    accept_input(event);
  }
}

void VirtualNetwork::accept_input(const Event& event) {
  const auto peer = static_cast<std::size_t>(event.peer);
  if (removed_[peer]) return;
  if (peers_[peer]->finished()) {
    after_finish(event);
    return;
  }
  threads_[peer].inputs.push_back(event);
  drain_inputs(event.peer);
}

// A finished peer still takes the models that reach it, so that with push-sum the mass of the
// whole run stays accounted for (tests/unit/consensus/push_sum_test.cc); it acts on nothing
// more. A real peer that finished leaves, and such late mass with it. An ad_psgd request
// gets its decline, as from a real peer in its goodbye: its active neighbour waits for it.
void VirtualNetwork::after_finish(const Event& event) {
  const auto* message = std::get_if<consensus::Message>(&event.what);
  if (message == nullptr) return;
  PeerProtocol& peer = *peers_[static_cast<std::size_t>(event.peer)];
  Actions actions;
  if (std::holds_alternative<consensus::AveragingArrived>(*message)) {
    peer.handle(now_s_, consensus::as_input(*message), actions);
    execute(event.peer, actions);
  } else if (std::holds_alternative<consensus::ModelArrived>(*message)) {
    peer.handle(now_s_, consensus::as_input(*message), actions);  // a finished peer acts on none
  }  // a coded gradient or a difference changes nothing any more, a goodbye neither
}

void VirtualNetwork::drain_inputs(PeerId id) {
  PeerThreads& threads = threads_[static_cast<std::size_t>(id)];
  PeerProtocol& peer = *peers_[static_cast<std::size_t>(id)];
  while (!threads.io_busy && !threads.inputs.empty()) {
    if (removed_[static_cast<std::size_t>(id)] || peer.finished()) {
      // Inputs that came while the peer did its last update meet a finished peer.
      if (!removed_[static_cast<std::size_t>(id)]) {
        for (const Event& input : threads.inputs) after_finish(input);
      }
      threads.inputs.clear();
      return;
    }
    const Event input = std::move(threads.inputs.front());
    threads.inputs.pop_front();
    Actions actions;
    handle_input(peer, input, actions);
    const double cost_s = io_cost_s(input, actions);
    if (cost_s <= 0) {
      execute(id, actions);
      continue;
    }
    threads.io_busy = true;
    Job job;
    job.peer = id;
    job.actions = std::move(actions);
    run_job(std::move(job), cost_s);
  }
}

void VirtualNetwork::handle_input(PeerProtocol& peer, const Event& input, Actions& actions) {
  if (const auto* message = std::get_if<consensus::Message>(&input.what)) {
    peer.handle(now_s_, consensus::as_input(*message), actions);
  } else if (const auto* gradient = std::get_if<GradientReady>(&input.what)) {
    auto& token = gradient_token_[static_cast<std::size_t>(input.peer)];
    if (gradient->token != token) return;  // begun before the peer left and came back
    token = 0;
    GradientResult result = gradients_.collect(input.peer, gradient->iteration);
    peer.handle(now_s_, consensus::GradientDone{std::move(result.gradient), result.stats}, actions);
  } else if (const auto* validation = std::get_if<ValidationReady>(&input.what)) {
    peer.handle(now_s_, consensus::ValidationDone{validation->iteration, validation->losses},
                actions);
  } else if (std::holds_alternative<TimerDue>(input.what)) {
    peer.handle(now_s_, consensus::TimerFired{}, actions);
  }
}

double VirtualNetwork::io_cost_s(const Event& input, const Actions& actions) const {
  if (!costs_.charges_io()) return 0;
  double cost = 0;
  if (const auto* message = std::get_if<consensus::Message>(&input.what)) {
    cost += costs_.receive_s;
    if (const auto* d = std::get_if<consensus::DifferenceArrived>(&*message);
        d != nullptr && d->difference) {
      cost += costs_.apply_difference_s_of(d->difference->kind);
    }
  }
  const ActionHandlers charge{
      [&](const SendParams& params) {
        cost += costs_.send_s * static_cast<double>(params.to.size());
      },
      [&](const SendCoded&) { cost += costs_.send_s; },
      [&](const SendCompressed& c) {
        cost += costs_.compress_s_of(c.difference->kind) +
                costs_.send_s * static_cast<double>(c.to.size());
      },
      // A reply follows a pass over the two models, like one term of an update.
      [&](const SendAveraging& a) {
        cost += costs_.send_s;
        if (a.step == AveragingStep::kReply && a.params) cost += costs_.update_per_term_s;
      },
      [&](const IterationCompleted& done) {
        cost += costs_.update_s + (done.record.neighbours > 0 ? costs_.decision_s : 0.0) +
                costs_.update_per_term_s * static_cast<double>(done.record.terms_mixed);
      },
      // Starting a gradient and arming a timer are hand-offs, not I/O work.
      [](const StartGradient&) {},
      [](const StartValidation&) {},
      [](const ArmTimer&) {},
      [](const NeighbourGone&) {},
      [](const Finished&) {},
  };
  for (const auto& action : actions) std::visit(charge, action);
  return cost;
}

bool VirtualNetwork::run_until(double until_s) {
  while (!queue_.empty() && queue_.top().at_s <= until_s) {
    Event event = queue_.top();
    queue_.pop();
    now_s_ = event.at_s;
    ++events_;
    dispatch(event);
  }
  if (until_s > now_s_) now_s_ = until_s;
  return !queue_.empty();
}

void VirtualNetwork::run() {
  while (!queue_.empty() && !all_finished()) {
    Event event = queue_.top();
    queue_.pop();
    now_s_ = event.at_s;
    ++events_;
    dispatch(event);
  }
}

void VirtualNetwork::stop() {
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    if (!removed_[i] && !peers_[i]->finished()) peers_[i]->stop();
  }
  // A reply reaches its peer, stopped or finished, which answers nothing.
  const auto deliver_reply = [&](PeerId to, const consensus::Message& message) {
    const auto* reply = std::get_if<consensus::AveragingArrived>(&message);
    if (!reply || reply->step != AveragingStep::kReply) return;
    if (removed_[static_cast<std::size_t>(to)]) return;
    Actions ignored;
    peers_[static_cast<std::size_t>(to)]->handle(now_s_, *reply, ignored);
  };
  const auto deliver_event = [&](const Event& e) {
    if (const auto* message = std::get_if<consensus::Message>(&e.what)) {
      deliver_reply(e.peer, *message);
    }
  };
  // The I/O work still going on: its updates happened in the protocol (their records are
  // reported), and its replies were averaged by their passive peers already (delivered).
  for (const auto& [id, job] : jobs_) {
    const auto owner = static_cast<std::size_t>(job.peer);
    if (removed_[owner] || job.generation != generation_[owner]) continue;  // gone with it
    for (const Action& action : job.actions) {
      if (const auto* done = std::get_if<IterationCompleted>(&action); done && on_record) {
        on_record(done->record);
      }
      if (const auto* a = std::get_if<SendAveraging>(&action)) {
        deliver_reply(a->to, consensus::AveragingArrived{job.peer, a->tag, a->step, a->params});
      }
    }
  }
  for (PeerThreads& threads : threads_) {
    for (const Event& input : threads.inputs) deliver_event(input);
    threads.inputs.clear();
  }
  while (!queue_.empty()) {
    deliver_event(queue_.top());
    queue_.pop();
  }
}

void VirtualNetwork::remove_peer(PeerId peer, double now_s) {
  if (removed_[static_cast<std::size_t>(peer)]) return;
  removed_[static_cast<std::size_t>(peer)] = true;
  ++away_;
  threads_[static_cast<std::size_t>(peer)].inputs.clear();
  now_s_ = std::max(now_s_, now_s);
  for (PeerId j : peers_[static_cast<std::size_t>(peer)]->contacts()) {
    if (removed_[static_cast<std::size_t>(j)] || peers_[static_cast<std::size_t>(j)]->finished()) {
      continue;
    }
    Actions actions;
    peers_[static_cast<std::size_t>(j)]->handle(now_s_, consensus::NeighbourLeft{peer, 0}, actions);
    execute(j, actions);
  }
}

void VirtualNetwork::leave_at(PeerId peer, double at_s) { schedule({at_s, 0, peer, Leave{}}); }

void VirtualNetwork::rejoin_at(PeerId peer, double at_s) {
  if (!make_peer) throw std::logic_error("VirtualNetwork::rejoin_at without make_peer");
  schedule({at_s, 0, peer, Rejoin{}});
}

void VirtualNetwork::leave(PeerId peer) {
  const auto p = static_cast<std::size_t>(peer);
  if (removed_[p] || peers_[p]->finished()) return;
  say_goodbye(peer, /*always=*/true);  // as a real peer asked to leave does
  peers_[p]->stop();                   // and settles, as it does
  // The gradient it was computing goes with its process.
  if (gradient_token_[p] != 0) {
    gradients_.recycle(gradients_.collect(peer, gradient_iteration_[p]).gradient);
    gradient_token_[p] = 0;
  }
  removed_[p] = true;
  left_[p] = true;
  ++away_;
  ++generation_[p];
  threads_[p] = PeerThreads{};
}

// The neighbours hear of the comeback through the link, behind what the peer sent them before
// (its goodbye), as they hear a restarted real peer's HELLO.
void VirtualNetwork::rejoin(PeerId peer) {
  const auto p = static_cast<std::size_t>(peer);
  if (!left_[p]) return;
  const auto running = [&](PeerId j) {
    return !removed_[static_cast<std::size_t>(j)] &&
           !peers_[static_cast<std::size_t>(j)]->finished();
  };
  // Those that send to it: from them it joins.
  const std::vector<PeerId> senders = peers_[p]->known_neighbours();
  if (std::none_of(senders.begin(), senders.end(), running)) return;  // no run to join
  const std::vector<PeerId> contacts = peers_[p]->contacts();
  peers_[p] = make_peer(peer);
  removed_[p] = false;
  left_[p] = false;
  --away_;
  ++rejoins_;
  Actions actions;
  peers_[p]->join(now_s_, actions);
  execute(peer, actions);
  for (PeerId j : contacts) {
    if (!running(j)) continue;
    const double after_s = std::max(now_s_, link_last_arrival_s_[{peer, j}]);
    schedule({after_s, 0, j, TakeBack{peer}});
  }
}

}  // namespace fastk::simulation
