// Max-min fair sharing, checked on small networks solved by hand.
#include <gtest/gtest.h>

#include "models/network/flow_network.hpp"

namespace sp::models {

TEST(FlowNetwork, AFlowAloneRunsAtLinkSpeed) {
  Engine e;
  FlowNetwork net(e);
  const auto l = net.add_link(BytesPerSecond(1e9));
  SimTime done;
  net.start(Bytes(1e6), {{l, 1.0}}, [&] { done = e.now(); });
  e.run();
  EXPECT_EQ(done.ps(), milliseconds(1).ps());  // 1 MB at 1 GB/s
}

TEST(FlowNetwork, TwoFlowsShareALinkAndTheSurvivorSpeedsUp) {
  // 1 GB/s link; A = 1 MB and B = 3 MB start together at 0.5 GB/s each. A ends at 2 ms, when B
  // has 2 MB left, which it then moves at 1 GB/s: B ends at 4 ms.
  Engine e;
  FlowNetwork net(e);
  const auto l = net.add_link(BytesPerSecond(1e9));
  SimTime a, b;
  net.start(Bytes(1e6), {{l, 1.0}}, [&] { a = e.now(); });
  net.start(Bytes(3e6), {{l, 1.0}}, [&] { b = e.now(); });
  EXPECT_EQ(net.rates(), (std::vector<double>{0.5e9, 0.5e9}));
  e.run();
  EXPECT_EQ(a.ps(), milliseconds(2).ps());
  EXPECT_EQ(b.ps(), milliseconds(4).ps());
  EXPECT_EQ(e.events_processed(), 2u);  // one event per flow end
}

TEST(FlowNetwork, MaxMinFairnessAcrossTwoLinks) {
  // Links X (1 GB/s) and Y (3 GB/s). Flow 1 uses X, flow 2 uses X and Y, flow 3 uses Y.
  // X is the bottleneck: flows 1 and 2 get 0.5 GB/s; flow 3 gets what Y has left, 2.5 GB/s.
  Engine e;
  FlowNetwork net(e);
  const auto x = net.add_link(BytesPerSecond(1e9));
  const auto y = net.add_link(BytesPerSecond(3e9));
  net.start(Bytes(1e9), {{x, 1.0}}, {});
  net.start(Bytes(1e9), {{x, 1.0}, {y, 1.0}}, {});
  net.start(Bytes(1e9), {{y, 1.0}}, {});
  const auto r = net.rates();
  EXPECT_DOUBLE_EQ(r[0], 0.5e9);
  EXPECT_DOUBLE_EQ(r[1], 0.5e9);
  EXPECT_DOUBLE_EQ(r[2], 2.5e9);
}

TEST(FlowNetwork, WeightsAndCaps) {
  // A weight-2 flow loads the link twice per byte: with a weight-1 flow on a 3 GB/s link both
  // get 1 GB/s (2 x 1 + 1 = 3). A capped flow leaves the rest to the others.
  Engine e;
  FlowNetwork net(e);
  const auto l = net.add_link(BytesPerSecond(3e9));
  net.start(Bytes(1e9), {{l, 2.0}}, {});
  net.start(Bytes(1e9), {{l, 1.0}}, {});
  EXPECT_EQ(net.rates(), (std::vector<double>{1e9, 1e9}));
  Engine e2;
  FlowNetwork capped(e2);
  const auto m = capped.add_link(BytesPerSecond(3e9));
  capped.start(Bytes(1e9), {{m, 1.0}}, {}, BytesPerSecond(0.5e9));
  capped.start(Bytes(1e9), {{m, 1.0}}, {});
  EXPECT_EQ(capped.rates(), (std::vector<double>{0.5e9, 2.5e9}));
}

}  // namespace sp::models
