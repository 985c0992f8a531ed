// Training curves: the batch-loss history's text form (stored in checkpoints so that --resume keeps it)
// and the panels of curves.png, which stay readable after a single epoch.
#include "tessera/train/curves.h"
#include "test_util.h"

using namespace tessera;

TEST(TrainingCurves, LossCurveTextRoundTripsExactly) {
  const train::LossCurve curve{{0.25, 2.302585092994046}, {0.5, 1.0000000000000002}, {1.0, 1e-300}, {1.25, 0.1}};
  const std::string text = train::loss_curve_text(curve);
  EXPECT_EQ(text.substr(0, 14), "position,loss\n");
  EXPECT_EQ(train::parse_loss_curve(text, "ckpt"), curve);  // exactly, not approximately
  EXPECT_TRUE(train::parse_loss_curve("position,loss\n", "ckpt").empty());
}

TEST(TrainingCurves, MalformedHistoryNamesWhatAndTheLine) {
  EXPECT_TESSERA_ERROR(train::parse_loss_curve("", "ckpt x"), "ckpt x", "empty");
  EXPECT_TESSERA_ERROR(train::parse_loss_curve("pos,loss\n", "ckpt x"), "ckpt x", "line 1", "position,loss");
  EXPECT_TESSERA_ERROR(train::parse_loss_curve("position,loss\n0.5,1\n0.25,2\n", "ckpt x"), "line 3", "0.25");
  EXPECT_TESSERA_ERROR(train::parse_loss_curve("position,loss\n0.5,nan\n", "ckpt x"), "line 2", "nan");
  EXPECT_TESSERA_ERROR(train::parse_loss_curve("position,loss\n0.5;1\n", "ckpt x"), "line 2", "0.5;1");
  EXPECT_TESSERA_ERROR(train::parse_loss_curve("position,loss\n0.5,1", "ckpt x"), "line 2", "newline");
}

TEST(TrainingCurves, OneEpochPlotsTheWholeBatchLossHistoryFromEpochZero) {
  train::LossCurve curve;
  for (int i = 1; i <= 50; ++i) curve.emplace_back(i / 50.0, 2.3 / i);
  train::EpochRecord e;
  e.epoch = 1;
  e.train_loss = 0.6;
  e.test_loss = 0.5;
  e.test_accuracy = 0.8312;
  const std::vector<viz::Chart> charts = train::training_charts(curve, {e});
  ASSERT_EQ(charts.size(), 2u);
  ASSERT_FALSE(charts[0].series.empty());
  EXPECT_EQ(charts[0].series[0].x.size(), 50u);  // the batch-loss history, not one point per epoch
  EXPECT_EQ(charts[0].x_from, 0.0);
  EXPECT_EQ(charts[1].x_from, 0.0);  // the single accuracy point sits at epoch 1 on an axis from 0
  EXPECT_NE(charts[1].series[0].label.find("83.12%"), std::string::npos) << charts[1].series[0].label;
}
