#!/usr/bin/env python3
"""The small training jobs the co-location benchmarks run, as models/small/*.yaml describe them:
PointNet classification with Conv1d layers (pointnet_cls.yaml), PointNet as HFTA's benchmark runs
it, per-point Linear layers and the feature transform (pointnet_cls_hfta.yaml), and ResNet-18 in
its CIFAR-10 variant (kuangliu/pytorch-cifar models/resnet.py, HFTA's ResNet benchmark). Each job: its model, its
optimizer, one batch of random data already on the GPU, and amp (fp16 autocast, GradScaler).
"""


def build_pointnet(torch):
    nn, F = torch.nn, torch.nn.functional

    class STN3d(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.c2, self.c3 = nn.Conv1d(3, 64, 1), nn.Conv1d(64, 128, 1), nn.Conv1d(128, 1024, 1)
            self.f1, self.f2, self.f3 = nn.Linear(1024, 512), nn.Linear(512, 256), nn.Linear(256, 9)
            self.b = nn.ModuleList(nn.BatchNorm1d(c) for c in (64, 128, 1024, 512, 256))

        def forward(self, x):
            x = F.relu(self.b[0](self.c1(x)))
            x = F.relu(self.b[1](self.c2(x)))
            x = torch.max(F.relu(self.b[2](self.c3(x))), 2)[0]
            x = F.relu(self.b[4](self.f2(F.relu(self.b[3](self.f1(x))))))
            eye = torch.eye(3, device=x.device, dtype=x.dtype).flatten()
            return (self.f3(x) + eye).view(-1, 3, 3)

    class PointNetCls(nn.Module):
        def __init__(self, k=16):
            super().__init__()
            self.stn = STN3d()
            self.c1, self.c2, self.c3 = nn.Conv1d(3, 64, 1), nn.Conv1d(64, 128, 1), nn.Conv1d(128, 1024, 1)
            self.b1, self.b2, self.b3 = nn.BatchNorm1d(64), nn.BatchNorm1d(128), nn.BatchNorm1d(1024)
            self.f1, self.f2, self.f3 = nn.Linear(1024, 512), nn.Linear(512, 256), nn.Linear(256, k)
            self.b4, self.b5 = nn.BatchNorm1d(512), nn.BatchNorm1d(256)
            self.drop = nn.Dropout(0.3)

        def forward(self, x):
            t = self.stn(x)
            x = torch.bmm(x.transpose(2, 1), t).transpose(2, 1)
            x = F.relu(self.b1(self.c1(x)))
            x = F.relu(self.b2(self.c2(x)))
            x = torch.max(self.b3(self.c3(x)), 2)[0]
            x = F.relu(self.b4(self.f1(x)))
            x = F.relu(self.b5(self.drop(self.f2(x))))
            return F.log_softmax(self.f3(x), dim=1)

    return PointNetCls


def build_pointnet_points(torch, k=16):
    """PointNet-cls laid out as HFTA's benchmark runs it: the points of a batch as rows, [N x P, C],
    every shared MLP layer an nn.Linear with BatchNorm1d over the rows, an input transform (3 x 3)
    and a feature transform (64 x 64), each predicted by a small PointNet of its own. Input [N, P,
    3]; forward returns log-probabilities and leaves the feature transform's orthogonality penalty
    (mean over the batch of ||I - A A^T||) in `self.penalty` for the loss."""
    nn, F = torch.nn, torch.nn.functional

    class PointMlp(nn.Module):
        def __init__(self, widths):
            super().__init__()
            self.lin = nn.ModuleList(nn.Linear(a, b) for a, b in zip(widths, widths[1:]))
            self.bn = nn.ModuleList(nn.BatchNorm1d(b) for b in widths[1:])

        def forward(self, rows, last_relu=True):
            for i, (lin, bn) in enumerate(zip(self.lin, self.bn)):
                rows = bn(lin(rows))
                if last_relu or i + 1 < len(self.lin):
                    rows = F.relu(rows)
            return rows

    class Transform(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.d = d
            self.points = PointMlp((d, 64, 128, 1024))
            self.f1, self.f2, self.f3 = nn.Linear(1024, 512), nn.Linear(512, 256), nn.Linear(256, d * d)
            self.b1, self.b2 = nn.BatchNorm1d(512), nn.BatchNorm1d(256)

        def forward(self, x):
            n, p, _ = x.shape
            h = self.points(x.reshape(n * p, self.d)).view(n, p, 1024).max(dim=1)[0]
            h = F.relu(self.b2(self.f2(F.relu(self.b1(self.f1(h))))))
            eye = torch.eye(self.d, device=x.device)
            return self.f3(h).view(n, self.d, self.d) + eye

    class PointNetPoints(nn.Module):
        def __init__(self):
            super().__init__()
            self.stn, self.fstn = Transform(3), Transform(64)
            self.first, self.rest = PointMlp((3, 64)), PointMlp((64, 128, 1024))
            self.f1, self.f2, self.f3 = nn.Linear(1024, 512), nn.Linear(512, 256), nn.Linear(256, k)
            self.b1, self.b2 = nn.BatchNorm1d(512), nn.BatchNorm1d(256)
            self.drop = nn.Dropout(0.3)
            self.penalty = None

        def forward(self, x):
            n, p, _ = x.shape
            x = torch.bmm(x, self.stn(x).to(x.dtype))
            h = self.first(x.reshape(n * p, 3)).view(n, p, 64)
            a = self.fstn(h)
            h = torch.bmm(h, a.to(h.dtype)).reshape(n * p, 64)
            h = self.rest(h, last_relu=False).view(n, p, 1024).max(dim=1)[0]
            h = F.relu(self.b2(self.drop(self.f2(F.relu(self.b1(self.f1(h)))))))
            eye = torch.eye(64, device=x.device)
            self.penalty = torch.linalg.matrix_norm(torch.bmm(a, a.transpose(1, 2)) - eye).mean()
            return F.log_softmax(self.f3(h), dim=1)

    return PointNetPoints


def build_resnet18(torch, classes=10):
    """ResNet-18 for 32x32 images: a 3x3 stem of 64 channels, no max-pool, four stages of two basic
    blocks (64, 128, 256, 512 channels; stride 2 from the second), a 1x1 convolution and BatchNorm
    on a shortcut that changes shape, 4x4 average pooling, a linear head."""
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.b1 = nn.BatchNorm2d(cout)
            self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.b2 = nn.BatchNorm2d(cout)
            self.short = nn.Sequential()
            if stride != 1 or cin != cout:
                self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            y = F.relu(self.b1(self.c1(x)))
            return F.relu(self.b2(self.c2(y)) + self.short(x))

    class ResNet18(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.b1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64)
            layers, cin = [], 64
            for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
                layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
                cin = cout
            self.layers = nn.Sequential(*layers)
            self.fc = nn.Linear(512, classes)

        def forward(self, x):
            x = self.layers(F.relu(self.b1(self.c1(x))))
            return F.log_softmax(self.fc(torch.flatten(F.avg_pool2d(x, 4), 1)), dim=1)

    return ResNet18


# name: (model class builder, optimizer, batch, one sample's shape, classes)
JOBS = {
    "pointnet": (build_pointnet, lambda torch, p: torch.optim.Adam(p, lr=1e-3), 32, (3, 2500), 16),
    "resnet18": (build_resnet18, lambda torch, p: torch.optim.SGD(p, lr=0.1, momentum=0.9), 128, (3, 32, 32), 10),
}


def job(torch, name):
    """(model on the GPU, optimizer, input batch, labels) of job `name`."""
    builder, optimizer, batch, shape, classes = JOBS[name]
    model = builder(torch)().cuda()
    x = torch.randn(batch, *shape, device="cuda")
    y = torch.randint(0, classes, (batch,), device="cuda")
    return model, optimizer(torch, model.parameters()), x, y
