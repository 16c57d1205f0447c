#!/usr/bin/env python3
"""Writes the fixture's PDF pages (kb/<tenant>/*.pdf) with a small hand-rolled PDF writer.

Each PDF uses the standard Helvetica Type 1 font (no embedding), one content stream per page,
a running header line and a "Page N of M" footer, and an /Info dictionary with /Title. The
page text is ASCII only. Run: python3 eval/ambleside/make_pdfs.py (the output is committed).
Metadata for the help centre (document_id, tenant, groups, ...) is in <file>.pdf.meta.yaml.
"""

import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))


# The writer is eval/fernhill/make_pdfs.py's (one PDF per document, same layout).
_WRITER = runpy.run_path(os.path.join(HERE, "..", "fernhill", "make_pdfs.py"))


DOCS = {}

DOCS["ambleside/extras-and-charges-2026"] = (
    "Guest extras and charges 2026",
    "Ambleside Lakeland Cottages - Guest extras and charges - stays from 5 January 2026",
    """
# Guest extras and charges 2026
Ambleside Lakeland Cottages Ltd, 14 Rydal Road, Ambleside, Cumbria.
For stays from 5 January 2026 to 4 January 2027. Prices include VAT.

1. EXTRAS YOU CAN ADD TO YOUR BOOKING
Add extras in My Booking, or by phone, up to 48 hours before you arrive.
They are added to your balance, or taken from your card if the balance
has already been paid.

Extra                                      Price
Dog, short break of up to 4 nights         GBP 20.00 per dog
Dog, 5 to 7 nights                         GBP 30.00 per dog
Dog, 8 nights or more                      GBP 45.00 per dog
Extra towel pack (bath and hand towel)     GBP 12.00 per person
Welcome hamper                             GBP 45.00
Extra basket of logs                       GBP 8.00 per basket
Early arrival from 1pm                     GBP 25.00
Late departure until 12 noon               GBP 25.00
Fresh flowers on arrival                   GBP 30.00
Grocery delivery from Ambleside            GBP 15.00 plus shopping
Mid-stay clean (3 hours)                   GBP 75.00
Travel cot or highchair                    Free
Electric car charging                      GBP 0.45 per kWh*
* Paid through the charger's app, at cottages with a charger only. The
  first 20 kWh of each stay are free at Signature cottages.

Early arrival and late departure depend on the cottage being free that
day, so we confirm them by text the day before your arrival. If we can't
confirm them, we don't charge you.
<<PAGE>>
2. CHARGES FOR CHANGES TO A BOOKING
Change                                              Charge
First change of dates, 8 weeks or more before       Free
Any other change of dates or cottage                GBP 35.00
Change of lead guest                                GBP 20.00
Relet administration fee                            GBP 40.00
Gift voucher sent by post                           GBP 2.50

3. CHARGES TAKEN FROM YOUR DAMAGE DEPOSIT
Item                                                Charge
Smoking or vaping inside                            GBP 200.00
Lost key or key fob                                 GBP 40.00
Hot tub refill after misuse                         GBP 150.00
Dog in a cottage that is not dog friendly           GBP 75.00
Extra cleaning                                      GBP 25.00 per hour
Leaving after 10am without agreement                GBP 30.00 per hour

4. DAMAGE DEPOSITS
Type of cottage                                     Damage deposit
Most cottages                                       GBP 150.00
Cottages with a hot tub                             GBP 250.00
Large houses (sleep 10 or more)                     GBP 300.00
The damage deposit is a pre-authorisation on your card, taken 7 days
before you arrive. See our damage deposit terms for how deductions are
made and how to dispute them. Full terms for all holiday accom-
modation we let are in our booking terms at amblesidecottages.example.
""",
)

DOCS["gridwise/fees-and-charges-2026"] = (
    "Gridwise fees and charges schedule 2026",
    "Gridwise Energy Limited - Residential fees and charges - effective 1 April 2026",
    """
# Residential fees and charges
Gridwise Energy Limited. Effective 1 April 2026 until further notice.
All amounts are in New Zealand dollars (NZD) and include GST at 15%.

1. ACCOUNT AND PAYMENT FEES
Fee                                              Amount
Paper bill sent by post                          NZD 2.50 per bill
Card payment                                     1.3% of the payment
Dishonoured payment or direct debit              NZD 10.00
Late payment                                     No fee (prompt payment
                                                 discount not given)
Debt collection referral                         NZD 45.00
Bond (after 2 disconnections in 12 months)       Up to NZD 300.00

2. METER AND CONNECTION FEES
Service                               Business hours    After hours
Remote disconnection (smart meter)    NZD 15.00         NZD 15.00
Remote reconnection (smart meter)     NZD 15.00         NZD 15.00
Disconnection by a technician         NZD 75.00         not offered
Reconnection by a technician          NZD 95.00         NZD 220.00
Same-day move-in connection           NZD 40.00         NZD 40.00
Special meter read                    NZD 45.00         not offered
Meter accuracy test*                  NZD 120.00        not offered
* Refunded if the meter is found to be outside the allowed accuracy of
  plus or minus 2.5 percent.
Business hours are 8am to 5pm, Monday to Friday, except public holidays.
Lines companies may add their own charges for work at the meter box,
which we pass on at cost.
<<PAGE>>
3. ELECTRICITY DAILY CHARGES BY NETWORK (ANYTIME PLAN)
The daily charge depends on the network your home is connected to.

Network                              Low user       Standard user
Wellington Electricity               NZD 0.90       NZD 2.15
Vector (Auckland)                    NZD 0.90       NZD 2.39
Powerco (Taranaki, Manawatu)         NZD 0.90       NZD 2.64
Unison (Hawke's Bay, Taupo)          NZD 0.90       NZD 2.41
Orion (Christchurch)                 NZD 0.90       NZD 1.87
Aurora (Dunedin, Central Otago)      NZD 0.90       NZD 2.78
Daily charges are per day for each ICP. Unit rates for each network are
in your welcome pack and in My Gridwise.

4. BOTTLED LPG
Item                                             Amount
45 kg bottle, delivered                          NZD 148.00
Bottle rental, per bottle per year               NZD 62.50
Urgent delivery, next working day                NZD 35.00
Bottle collection when you leave                 Free

5. BREAK FEES FOR FIXED-PRICE PLANS
Fixed 12: NZD 150.00 per ICP. Fixed 24: NZD 200.00 per ICP. Open-term
plans have no break fee. Full terms for fixed-price plans are in our Resi-
dential Customer Terms, Schedule 2, at gridwise.example/terms.
""",
)


def main():
    _WRITER["write_all"](DOCS, HERE, "ambleside make_pdfs.py")


if __name__ == "__main__":
    main()
